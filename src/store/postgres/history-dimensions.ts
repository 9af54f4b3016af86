import type { TransactionSql } from 'postgres';
import { must } from '../../domain/must.ts';
import type { MarketSnapshot } from '../../domain/records/history.ts';
import { compare } from '../history.ts';

/** Rows per INSERT of a history append (each column one array parameter). */
export const APPEND_CHUNK_ROWS = 10_000;

/** A row of history_markets: its id, and the chain and protocol its snapshots have unless they say otherwise. */
interface MarketDimension {
  id: number;
  chainId: number;
  protocol: string;
}

/**
 * The ids of the history's dimensions (history_markets by market key, history_addresses by
 * chain and address), resolved inside an append's transaction and cached once it commits.
 */
export class HistoryDimensions {
  /** Committed history_markets rows by market key, and history_addresses ids by `chainId:address`. */
  readonly #markets = new Map<string, MarketDimension>();
  readonly #addresses = new Map<string, number>();

  clear(): void {
    this.#markets.clear();
    this.#addresses.clear();
  }

  cacheMarkets = (ids: Map<string, MarketDimension>): void => {
    for (const [k, v] of ids) this.#markets.set(k, v);
  };

  cacheAddresses = (ids: Map<string, number>): void => {
    for (const [k, v] of ids) this.#addresses.set(k, v);
  };

  /**
   * The history_markets rows of the markets of `rows`, by key; a market not stored yet is
   * inserted with the chain and protocol of its first row. Keys are inserted in byte order,
   * so concurrent appends wait on each other's new keys in one order (no deadlock).
   */
  async marketIds(
    tx: TransactionSql,
    rows: readonly Pick<MarketSnapshot, 'marketKey' | 'chainId' | 'protocol'>[],
  ): Promise<Map<string, MarketDimension>> {
    const first = new Map<string, Pick<MarketSnapshot, 'chainId' | 'protocol'>>();
    const found = new Map<string, MarketDimension>();
    for (const r of rows) {
      if (found.has(r.marketKey) || first.has(r.marketKey)) continue;
      const cached = this.#markets.get(r.marketKey);
      if (cached) found.set(r.marketKey, cached);
      else first.set(r.marketKey, r);
    }
    const read = async (keys: string[]) => {
      for (let i = 0; i < keys.length; i += APPEND_CHUNK_ROWS) {
        const chunk = keys.slice(i, i + APPEND_CHUNK_ROWS);
        const stored = await tx`
          SELECT id, market_key, chain_id, protocol FROM history_markets WHERE market_key = ANY(${chunk}::text[])`;
        for (const r of stored) {
          found.set(r.market_key as string, {
            id: r.id as number,
            chainId: Number(r.chain_id),
            protocol: r.protocol as string,
          });
        }
      }
    };
    await read([...first.keys()]);
    const missing = [...first.keys()].filter((k) => !found.has(k)).sort(compare);
    for (let i = 0; i < missing.length; i += APPEND_CHUNK_ROWS) {
      const chunk = missing.slice(i, i + APPEND_CHUNK_ROWS);
      await tx`
        INSERT INTO history_markets (market_key, chain_id, protocol)
        SELECT * FROM unnest(
          ${chunk}::text[],
          ${chunk.map((k) => must(first.get(k), `market ${k}`).chainId)}::bigint[],
          ${chunk.map((k) => must(first.get(k), `market ${k}`).protocol)}::text[])
        ON CONFLICT (market_key) DO NOTHING`;
    }
    // Read back rather than RETURNING: a key another append committed meanwhile is skipped by the insert.
    if (missing.length > 0) await read(missing);
    return found;
  }

  /** The history_addresses ids of (chainId, address) pairs, by `chainId:address`; new ones inserted in order. */
  async addressIds(tx: TransactionSql, pairs: readonly [number, string][]): Promise<Map<string, number>> {
    const unique = new Map<string, [number, string]>();
    const found = new Map<string, number>();
    for (const p of pairs) {
      const key = `${p[0]}:${p[1]}`;
      const cached = this.#addresses.get(key);
      if (cached !== undefined) found.set(key, cached);
      else unique.set(key, p);
    }
    const read = async (list: [number, string][]) => {
      for (let i = 0; i < list.length; i += APPEND_CHUNK_ROWS) {
        const chunk = list.slice(i, i + APPEND_CHUNK_ROWS);
        const stored = await tx`
          SELECT a.id, a.chain_id, a.address
            FROM unnest(${chunk.map((p) => p[0])}::bigint[], ${chunk.map((p) => p[1])}::text[]) AS k(chain_id, address)
            JOIN history_addresses a ON a.chain_id = k.chain_id AND a.address = k.address`;
        for (const r of stored) found.set(`${r.chain_id}:${r.address}`, r.id as number);
      }
    };
    await read([...unique.values()]);
    const missing = [...unique.entries()]
      .filter(([k]) => !found.has(k))
      .map(([, p]) => p)
      .sort((a, b) => a[0] - b[0] || compare(a[1], b[1]));
    for (let i = 0; i < missing.length; i += APPEND_CHUNK_ROWS) {
      const chunk = missing.slice(i, i + APPEND_CHUNK_ROWS);
      await tx`
        INSERT INTO history_addresses (chain_id, address)
        SELECT * FROM unnest(${chunk.map((p) => p[0])}::bigint[], ${chunk.map((p) => p[1])}::text[])
        ON CONFLICT (chain_id, address) DO NOTHING`;
    }
    if (missing.length > 0) await read(missing);
    return found;
  }
}
