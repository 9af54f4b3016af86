import type {
  DatasetChanges,
  PositionChange,
  StoredMarketChange,
  StoredPositionChange,
  StoredVaultChange,
} from '../domain/records/dataset.ts';
import type { MarketRecord, VaultRecord } from '../domain/types.ts';

const ADDRESS = /^0x[0-9a-f]{40}$/;

/**
 * Refuses a batch of position changes with any invalid row, before anything is written: a user
 * that is not a lower-case 0x address, an amount that is negative or not finite, a health
 * factor that is negative or NaN (Infinity is a position without debt), a position named twice.
 */
export function checkPositionChanges(changes: readonly PositionChange[]): void {
  const seen = new Set<string>();
  for (const c of changes) {
    const where = `position ${c.marketKey}/${c.user}`;
    if (typeof c.marketKey !== 'string' || c.marketKey === '') throw new RangeError(`${where}: no market`);
    if (!ADDRESS.test(c.user)) throw new RangeError(`${where}: user is not a lower-case 0x address`);
    for (const f of ['collateralUsd', 'borrowUsd', 'supplyUsd'] as const) {
      if (!(Number.isFinite(c[f]) && c[f] >= 0))
        throw new RangeError(`${where}: ${f} must be finite and >= 0`);
    }
    if (!(c.healthFactor >= 0)) throw new RangeError(`${where}: healthFactor must be >= 0`);
    if (c.basedOn !== undefined && !(Number.isSafeInteger(c.basedOn) && c.basedOn >= 0))
      throw new RangeError(`${where}: basedOn must be a sequence number`);
    const key = `${c.marketKey}\n${c.user}`;
    if (seen.has(key)) throw new RangeError(`${where}: named twice in one batch`);
    seen.add(key);
  }
}

/**
 * Refuses a batch of market records with any invalid one, before anything is written: no
 * uniqueKey, a balance or APY that is negative or not finite, a price that is not positive and
 * finite (it may be null: unknown, then USD balances of its loan token are null with it; never
 * 0, "Real sources" (docs/decisions.md)), an LLTV outside [0, 1) (at 1 a market's leverage is unbounded), a market named twice.
 */
export function checkMarketChanges(records: readonly MarketRecord[]): void {
  const seen = new Set<string>();
  for (const m of records) {
    const where = `market ${m.uniqueKey}`;
    if (typeof m.uniqueKey !== 'string' || m.uniqueKey === '') throw new RangeError('market: no uniqueKey');
    for (const f of [
      'collateralPrice',
      'loanPrice',
      'supply',
      'borrow',
      'supplyAssets',
      'borrowAssets',
    ] as const) {
      const x = m[f];
      // The two token amounts may be left out; every other figure is a number or null.
      if (x === null || (x === undefined && (f === 'supplyAssets' || f === 'borrowAssets'))) continue;
      if (f === 'collateralPrice' || f === 'loanPrice') {
        if (!(typeof x === 'number' && Number.isFinite(x) && x > 0))
          throw new RangeError(`${where}: ${f} must be finite and > 0, or null (unknown, never 0)`);
      } else if (!(typeof x === 'number' && Number.isFinite(x) && x >= 0))
        throw new RangeError(`${where}: ${f} must be finite and >= 0, or null`);
    }
    // Both USD amounts of the loan token, or neither: exactly when its price is known.
    if ((m.supply === null) !== (m.loanPrice === null) || (m.borrow === null) !== (m.loanPrice === null))
      throw new RangeError(`${where}: supply and borrow are null exactly when loanPrice is`);
    for (const f of ['supplyApy', 'borrowApy', 'supplyRewardsApy', 'borrowRewardsApy'] as const) {
      if (!(Number.isFinite(m[f]) && m[f] >= 0))
        throw new RangeError(`${where}: ${f} must be finite and >= 0`);
    }
    if (!(m.lltv >= 0 && m.lltv < 1)) throw new RangeError(`${where}: lltv must be in [0, 1)`);
    if (seen.has(m.uniqueKey)) throw new RangeError(`${where}: named twice in one batch`);
    seen.add(m.uniqueKey);
  }
}

/** The columns of the position change feed that both stores read. */
export const POSITION_CHANGE_COLUMNS = [
  'market_key',
  'user',
  'source',
  'seq',
  'collateral_usd',
  'borrow_usd',
  'supply_usd',
  'health_factor',
] as const;

/** A row of position_changes as a stored change; numbers may come as strings (PostgreSQL bigint). */
export function storedPositionChange(r: Record<string, unknown>): StoredPositionChange {
  return {
    marketKey: r.market_key as string,
    user: r.user as string,
    source: r.source as string,
    seq: Number(r.seq),
    collateralUsd: Number(r.collateral_usd),
    borrowUsd: Number(r.borrow_usd),
    supplyUsd: Number(r.supply_usd),
    healthFactor: Number(r.health_factor),
  };
}

/** A row of market_changes as a stored change. */
export function storedMarketChange(r: Record<string, unknown>): StoredMarketChange {
  return {
    record: JSON.parse(r.doc as string) as MarketRecord,
    seq: Number(r.seq),
    source: r.source as string,
  };
}

/**
 * Refuses a batch of vault records with any invalid one, before anything is written: an
 * address that is not a lower-case 0x address, a chain id that is not a positive integer, a
 * vault named twice.
 */
export function checkVaultChanges(records: readonly VaultRecord[]): void {
  const seen = new Set<string>();
  for (const v of records) {
    const where = `vault ${v.chainId}:${v.address}`;
    if (!ADDRESS.test(v.address)) throw new RangeError(`${where}: address is not a lower-case 0x address`);
    if (!(Number.isSafeInteger(v.chainId) && v.chainId > 0))
      throw new RangeError(`${where}: chainId must be a positive integer`);
    const key = `${v.chainId}:${v.address}`;
    if (seen.has(key)) throw new RangeError(`${where}: named twice in one batch`);
    seen.add(key);
  }
}

/** Refuses a pass's changes (applyChanges) with any invalid record, before anything is written. */
export function checkDatasetChanges(changes: DatasetChanges): void {
  // (A market or vault added is also in the change feed: it may not be changed in the same batch.)
  checkMarketChanges([...(changes.added?.markets ?? []), ...changes.markets]);
  checkPositionChanges(changes.positions);
  checkVaultChanges([...(changes.added?.vaults ?? []), ...changes.vaults]);
}

export function storedVaultChange(r: Record<string, unknown>): StoredVaultChange {
  return {
    record: JSON.parse(r.doc as string) as VaultRecord,
    seq: Number(r.seq),
    source: r.source as string,
  };
}
