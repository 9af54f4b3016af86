import { must } from '../domain/must.ts';
import type { OracleRecord } from '../domain/types.ts';
import type { Catalog } from './catalog.ts';

/**
 * Tokens and oracles of a catalog, by chain and address: which markets hold each token (as
 * collateral, as loan) and which markets each oracle prices. The set of markets of a catalog
 * never changes (a new dataset is a new catalog), so this is built once per catalog, on the
 * first request that needs it; prices, balances and oracle clocks are read from the catalog's
 * current views when an answer is built.
 */

export interface TokenEntry {
  chainId: number;
  /** Lower-case 0x address. */
  address: string;
  symbol: string;
  name: string;
  decimals: number | null;
  /** Market ords holding the token as collateral, and as loan. */
  collateralOrds: number[];
  loanOrds: number[];
}

export interface OracleEntry {
  chainId: number;
  /** Lower-case 0x address. */
  address: string;
  /** Market ords priced by the oracle (the first one's view gives its feeds' clocks). */
  ords: number[];
}

export interface FeedEntry {
  chainId: number;
  address: string;
  pair: string;
  /** The pair's base and quote symbols, upper-case ('' when the pair has no `/`). */
  base: string;
  quote: string;
  /** The oracles listing the feed, and the ord of a market of each (for its current clock). */
  oracles: { address: string; ord: number }[];
}

export class AssetIndex {
  /** Tokens by (chainId, address) ascending: the stable order lists page in. */
  readonly tokens: readonly TokenEntry[];
  readonly oracles: readonly OracleEntry[];
  private readonly tokenAt = new Map<string, TokenEntry>();
  private readonly oracleAt = new Map<string, OracleEntry>();
  /** Feeds by chain, then by base symbol. */
  private readonly feedsByBase = new Map<string, FeedEntry[]>();

  constructor(catalog: Catalog) {
    const records = catalog.baseRecords();
    const feeds = new Map<string, FeedEntry>();
    for (const [ord, m] of records.entries()) {
      const sides = [
        [m.collateralAddress, m.collateral, m.collateralName, m.collateralDecimals, 'collateralOrds'],
        [m.loanAddress, m.loan, m.loanName, m.loanDecimals, 'loanOrds'],
      ] as const;
      for (const [address, symbol, name, decimals, side] of sides) {
        const key = keyOf(m.chainId, address);
        let t = this.tokenAt.get(key);
        if (!t) {
          t = {
            chainId: m.chainId,
            address: address.toLowerCase(),
            symbol,
            name,
            decimals: decimals ?? null,
            collateralOrds: [],
            loanOrds: [],
          };
          this.tokenAt.set(key, t);
        }
        // The first market that knows the decimals gives them.
        if (t.decimals === null && decimals !== undefined && decimals !== null) t.decimals = decimals;
        t[side].push(ord);
      }
      const oracle = m.oracle;
      if (oracle === null) continue;
      const okey = keyOf(m.chainId, oracle.address);
      let o = this.oracleAt.get(okey);
      if (!o) {
        o = { chainId: m.chainId, address: oracle.address.toLowerCase(), ords: [] };
        this.oracleAt.set(okey, o);
        for (const f of oracle.feeds) {
          const fkey = keyOf(m.chainId, f.address);
          let feed = feeds.get(fkey);
          if (!feed) {
            const [base = '', quote = ''] = f.pair.split('/').map((s) => s.trim().toUpperCase());
            feed = {
              chainId: m.chainId,
              address: f.address.toLowerCase(),
              pair: f.pair,
              base,
              quote,
              oracles: [],
            };
            feeds.set(fkey, feed);
            const bkey = `${m.chainId}:${base}`;
            const list = this.feedsByBase.get(bkey);
            if (list) list.push(feed);
            else this.feedsByBase.set(bkey, [feed]);
          }
          feed.oracles.push({ address: o.address, ord });
        }
      }
      o.ords.push(ord);
    }
    const byKey = (a: { chainId: number; address: string }, b: { chainId: number; address: string }) =>
      a.chainId - b.chainId || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0);
    this.tokens = [...this.tokenAt.values()].sort(byKey);
    this.oracles = [...this.oracleAt.values()].sort(byKey);
  }

  token(chainId: number, address: string): TokenEntry | undefined {
    return this.tokenAt.get(keyOf(chainId, address));
  }

  oracle(chainId: number, address: string): OracleEntry | undefined {
    return this.oracleAt.get(keyOf(chainId, address));
  }

  /**
   * The feeds on the token's chain that price it: those whose pair's base is its symbol, or the
   * asset it wraps (`WETH` by `ETH/…`, `WBTC` by `BTC/…`), USD-quoted ones first.
   */
  feedsOf(t: Pick<TokenEntry, 'chainId' | 'symbol'>): FeedEntry[] {
    const symbol = t.symbol.toUpperCase();
    const bases = [symbol];
    if (symbol.length > 1 && symbol.startsWith('W')) bases.push(symbol.slice(1));
    const out: FeedEntry[] = [];
    for (const b of bases) out.push(...(this.feedsByBase.get(`${t.chainId}:${b}`) ?? []));
    return out.sort((a, b) => Number(b.quote === 'USD') - Number(a.quote === 'USD'));
  }
}

function keyOf(chainId: number, address: string): string {
  return `${chainId}:${address.toLowerCase()}`;
}

const indexes = new WeakMap<Catalog, { generation: number; index: AssetIndex }>();

/** The catalog's token and oracle index, built on first use and again once markets were added. */
export function assetsOf(catalog: Catalog): AssetIndex {
  let kept = indexes.get(catalog);
  if (kept?.generation !== catalog.generation) {
    kept = { generation: catalog.generation, index: new AssetIndex(catalog) };
    indexes.set(catalog, kept);
  }
  return kept.index;
}

/** The oracle as a market of it sees it now (its feeds' current clocks). */
export function currentOracle(catalog: Catalog, entry: OracleEntry, nowSec: number): OracleRecord {
  const view = catalog.viewAt(must(entry.ords[0], 'a market of the oracle'), nowSec);
  return must(view.oracle, `the oracle of market ${view.uniqueKey}`);
}
