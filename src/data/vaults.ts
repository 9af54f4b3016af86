import type { VaultAllocation, VaultRecord } from '../domain/types.ts';
import type { Catalog, MarketView } from './catalog.ts';

/** A vault with its allocations resolved to the catalog's markets. */
export interface VaultEntry {
  record: VaultRecord;
  /** Per allocation (same order): the market's ord, or undefined when the catalog lacks it. */
  ords: (number | undefined)[];
}

/** One allocation valued now. */
export interface AllocationValue {
  a: VaultAllocation;
  /** Its market as served; undefined when the catalog lacks it (it supplies nothing seen). */
  m: MarketView | undefined;
  /** What the vault supplies to it, USD; null when the market has no USD price of the asset (docs/decisions.md "Real sources"). */
  usd: number | null;
  /** The same in units of the asset; null when the market's supply in them is unknown. */
  assets: number | null;
  /** Its cap in USD (null: no cap, or no USD price of the asset) and in units of the asset (null: no cap, or unknown). */
  cap: { usd: number | null; assets: number | null } | null;
  /** What shares and APYs weigh it by: its USD, or its amount of the asset when one allocation has no USD. */
  weight: number;
}

/**
 * A vault's allocations at the markets' state now, the vault's USD total (null when one has no USD
 * price: a sum without it would understate, "Real sources" (docs/decisions.md)) and the sum of
 * their weights: USD when every allocation has it, else amounts of the asset (every allocation
 * lends the vault's one asset). A Morpho vault read on chain also holds idle assets (markets
 * without a collateral: no borrower, no interest): in the totals, at the asset's price in its
 * markets, in no allocation.
 */
export function allocationValues(
  catalog: Catalog,
  e: VaultEntry,
  nowSec: number,
): {
  parts: AllocationValue[];
  totalUsd: number | null;
  totalWeight: number;
  idle: { assets: number; usd: number | null };
} {
  const raw = e.record.allocations.map((a, i) => {
    const ord = e.ords[i];
    const m = ord === undefined ? undefined : catalog.viewAt(ord, nowSec);
    const usd = !m ? 0 : m.supply === null ? null : m.supply * a.supplyShare;
    const units = !m ? 0 : m.supplyAssets === null ? null : m.supplyAssets * a.supplyShare;
    return { a, m, usd, units };
  });
  const idleAssets = e.record.governance?.idleAssets ?? 0;
  const price =
    raw.find((p) => p.m?.loanPrice !== null && p.m?.loanPrice !== undefined)?.m?.loanPrice ?? null;
  const idleUsd = idleAssets === 0 ? 0 : price === null ? null : idleAssets * price;
  // Null as soon as one part has no USD value.
  const totalUsd = raw.reduce<number | null>(
    (s, p) => (s === null || p.usd === null ? null : s + p.usd),
    idleUsd,
  );
  const priced = totalUsd !== null;
  const parts = raw.map(({ a, m, usd, units }) => ({
    a,
    m,
    usd,
    assets: units,
    cap: capOf(a, m),
    weight: (priced ? usd : units) ?? 0,
  }));
  return {
    parts,
    totalUsd,
    totalWeight: parts.reduce((s, p) => s + p.weight, (priced ? idleUsd : idleAssets) ?? 0),
    idle: { assets: idleAssets, usd: idleUsd },
  };
}

/**
 * An allocation's cap (null: none): read in units of the asset (valued at the market's price
 * now), else in USD (in units at the market's price now).
 */
function capOf(a: VaultAllocation, m: MarketView | undefined): AllocationValue['cap'] {
  const price = m?.loanPrice ?? null;
  if (a.supplyCap !== undefined)
    return a.supplyCap === null
      ? null
      : { assets: a.supplyCap, usd: price === null ? null : a.supplyCap * price };
  if (a.supplyCapUsd === null || a.supplyCapUsd === undefined) return null;
  return { usd: a.supplyCapUsd, assets: price ? a.supplyCapUsd / price : null };
}

/**
 * The dataset's vaults by (chainId, address): the order lists page in, which no data change
 * moves. Their figures (assets, APY, shares) are computed from the markets' current views when
 * an answer is built.
 */
export class VaultIndex {
  readonly entries: readonly VaultEntry[];
  private readonly byKey = new Map<string, VaultEntry>();

  constructor(catalog: Catalog, records: readonly VaultRecord[]) {
    const entries = records.map((record) => ({
      record,
      ords: record.allocations.map((a) => catalog.ordOf(a.marketKey)),
    }));
    entries.sort(
      (a, b) =>
        a.record.chainId - b.record.chainId ||
        (a.record.address < b.record.address ? -1 : a.record.address > b.record.address ? 1 : 0),
    );
    for (const e of entries) this.byKey.set(`${e.record.chainId}:${e.record.address}`, e);
    this.entries = entries;
  }

  get(chainId: number, address: string): VaultEntry | undefined {
    return this.byKey.get(`${chainId}:${address.toLowerCase()}`);
  }

  get size(): number {
    return this.entries.length;
  }
}
