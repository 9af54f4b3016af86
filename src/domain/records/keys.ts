/** API keys and the accounts that hold them, as stored (src/store/ports/keys.ts). */

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
  | { ok: false; reason: 'TOO_MANY_CREATIONS'; created: number; freedBy: string }
  /** The answer's idempotency claim is no longer this request's (it outlived its lease): nothing written. */
  | { ok: false; reason: 'CLAIM_LOST' };

/** What changed among the keys since a keys version (`Store.keyChangesSince`). */
export interface KeyChanges {
  /** The current keys version: the `since` of the next call. */
  version: number;
  /** Hashes of the keys created, revoked or re-tiered after `since` (each once). */
  hashes: string[];
}
