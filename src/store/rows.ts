import type { KeyMode, KeyRecord } from '../domain/records/keys.ts';

/** An `api_keys` row as both SQL stores return it (same column names in both schemas). */
export interface KeyRow {
  id: string;
  account_id: string;
  hash: string;
  prefix: string;
  mode: string;
  tier: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

export function toKey(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    hash: row.hash,
    prefix: row.prefix,
    mode: row.mode as KeyMode,
    tier: row.tier,
    name: row.name,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
