/**
 * Token registry over every real token the reference data names: symbol, name and address per
 * chain. tokens.json comes first (it has names); the protocol files add the tokens they list.
 */
import type { ReferenceData } from './reference.ts';

export interface TokenRef {
  symbol: string;
  name: string;
  address: string;
  /** From the token list; null when no reference file gives it. */
  decimals: number | null;
}

/** The placeholder Fluid (and others) use for a chain's native asset. */
const NATIVE_PLACEHOLDER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

const NATIVE_BY_CHAIN: Readonly<Record<number, { symbol: string; name: string }>> = {
  56: { symbol: 'BNB', name: 'BNB' },
  137: { symbol: 'POL', name: 'Polygon Ecosystem Token' },
  9745: { symbol: 'XPL', name: 'Plasma' },
  43114: { symbol: 'AVAX', name: 'Avalanche' },
  100: { symbol: 'XDAI', name: 'xDAI' },
};

export class TokenRegistry {
  readonly #byAddress = new Map<string, { symbol: string; name: string | null; decimals: number | null }>();
  readonly #bySymbol = new Map<string, string>();
  readonly #nameBySymbol = new Map<string, string>();

  constructor(ref: ReferenceData) {
    for (const t of ref.tokens) {
      this.#add(t.chainId, t.address, t.symbol, t.name, t.decimals);
      const upper = t.symbol.toUpperCase();
      if (!this.#nameBySymbol.has(upper)) this.#nameBySymbol.set(upper, t.name);
    }
    for (const r of ref.aaveReserves) this.#add(r.chainId, r.underlying, r.symbol, null);
    for (const r of ref.spark.reserves) this.#add(r.chainId, r.underlying, r.symbol, null);
    for (const c of ref.comets) {
      this.#add(c.chainId, c.baseToken, c.baseSymbol, null);
      for (const col of c.collaterals) this.#add(c.chainId, col.address, col.symbol, null);
    }
    for (const m of ref.morphoMarkets) {
      if (m.loanSymbol) this.#add(m.chainId, m.loanToken, m.loanSymbol, null);
      if (m.collateralSymbol) this.#add(m.chainId, m.collateralToken, m.collateralSymbol, null);
    }
  }

  #add(
    chainId: number,
    address: string,
    symbol: string,
    name: string | null,
    decimals: number | null = null,
  ): void {
    if (!symbol || !/^0x[0-9a-f]{40}$/.test(address)) return;
    const key = `${chainId}:${address}`;
    const valid =
      decimals !== null && Number.isInteger(decimals) && decimals >= 0 && decimals <= 36 ? decimals : null;
    if (!this.#byAddress.has(key)) this.#byAddress.set(key, { symbol, name, decimals: valid });
    const symKey = `${chainId}:${symbol.toUpperCase()}`;
    if (!this.#bySymbol.has(symKey)) this.#bySymbol.set(symKey, address);
  }

  /** A display name for a symbol: the token list's name if any chain has one, else the symbol. */
  nameOf(symbol: string): string {
    return this.#nameBySymbol.get(symbol.toUpperCase()) ?? symbol;
  }

  /** The token at an address on a chain, or null if no reference file names it. */
  byAddress(chainId: number, address: string): TokenRef | null {
    const addr = address.toLowerCase();
    if (addr === NATIVE_PLACEHOLDER) {
      const native = NATIVE_BY_CHAIN[chainId] ?? { symbol: 'ETH', name: 'Ether' };
      return { symbol: native.symbol, name: native.name, address: addr, decimals: 18 };
    }
    const hit = this.#byAddress.get(`${chainId}:${addr}`);
    if (!hit) return null;
    return {
      symbol: hit.symbol,
      name: hit.name ?? this.nameOf(hit.symbol),
      address: addr,
      decimals: hit.decimals,
    };
  }

  /** The token with this symbol (case-insensitive) on a chain, or null. */
  bySymbol(chainId: number, symbol: string): TokenRef | null {
    const address = this.#bySymbol.get(`${chainId}:${symbol.toUpperCase()}`);
    return address ? this.byAddress(chainId, address) : null;
  }

  /** A token with a known symbol and address: name from the registry, symbol as given. */
  ref(chainId: number, address: string, symbol: string): TokenRef {
    const known = this.byAddress(chainId, address);
    const name =
      known && known.symbol.toUpperCase() === symbol.toUpperCase() ? known.name : this.nameOf(symbol);
    return { symbol, name, address: address.toLowerCase(), decimals: known?.decimals ?? null };
  }
}
