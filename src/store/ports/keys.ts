import type { IdempotentAnswer } from '../../domain/records/idempotency.ts';
import type {
  AccountRecord,
  KeyChanges,
  KeyCreation,
  KeyLimits,
  KeyRecord,
} from '../../domain/records/keys.ts';

/** Keys and accounts (KeyService, the CLI). */
export interface KeyStore {
  createAccount(account: AccountRecord): Promise<void>;
  findAccountByName(name: string): Promise<AccountRecord | null>;
  getAccount(id: string): Promise<AccountRecord | null>;
  createKey(key: KeyRecord): Promise<void>;
  /**
   * Creates the key only if the account stays within `limits`, checked and written in one
   * transaction serialized per account (two concurrent creations cannot both pass a cap).
   * With `answer`, the request's answer is stored under its idempotency claim in the same
   * transaction (a key is never created without it), provided the claim is still the
   * request's (else CLAIM_LOST, and no key).
   */
  createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation>;
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeKey(id: string, at: string): Promise<boolean>;
  setKeyTier(id: string, tier: string): Promise<boolean>;
  /**
   * Moves the key to account `accountId` (which must exist). Its usage goes with it: the
   * account totals (UsageStore.accountUsageTotals) are read from the keys an account holds.
   * Returns false when the key does not exist.
   */
  moveKey(id: string, accountId: string): Promise<boolean>;
  /** A number that grows whenever any key is created, revoked or changed. */
  keysVersion(): Promise<number>;
  /**
   * The keys changed after keys version `since`, and the current version, read together (so a
   * reader that asks again with `version` misses nothing). A `since` above the current version
   * means the store is not the one `since` came from: the caller must assume every key changed.
   */
  keyChangesSince(since: number): Promise<KeyChanges>;
}
