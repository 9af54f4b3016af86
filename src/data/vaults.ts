import type { VaultRecord } from '../domain/types.ts';
import type { Catalog } from './catalog.ts';

/** A vault with its allocations resolved to the catalog's markets. */
export interface VaultEntry {
  record: VaultRecord;
  /** Per allocation (same order): the market's ord, or undefined when the catalog lacks it. */
  ords: (number | undefined)[];
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
