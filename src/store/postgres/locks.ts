/**
 * First keys of the advisory locks the PostgreSQL store takes, one per purpose. The second key
 * is a hash: of the schema for the store-wide locks, so stores in different schemas of one
 * database (tests) do not wait for each other; else of what is locked.
 */
export const LOCK_MIGRATE = 0x4c52_4401;
export const LOCK_DATASET = 0x4c52_4402;
/** Key creation by an account (its caps), the second key a hash of the account id. */
export const LOCK_ACCOUNT_KEYS = 0x4c52_4403;
/** The per-key locks of usage reservations (the second: a hash of the key id). */
export const LOCK_USAGE = 0x4c52_4404;
