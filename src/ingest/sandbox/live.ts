import { assetFamily } from '../../domain/asset-family.ts';
import type { MarketRecord, PriceChange } from '../../domain/types.ts';
import { SANDBOX_AS_OF } from './index.ts';
import { createPriceModel, type PriceModel } from './simulation/index.ts';

/** A token of the sandbox: its chain, lower-case address, symbol, and its snapshot USD price. */
export interface SandboxToken {
  chainId: number;
  token: string;
  symbol: string;
  /** Its price in the first market that holds it, at the snapshot. */
  base: number;
}

/**
 * How sandbox prices move: one price path per symbol (a token on several chains moves alike)
 * from the simulation (simulation/price-model.ts), deterministic from the seed and the time. A
 * token's price at t is its snapshot price times its symbol's ratio path(t) / path(asOf); each
 * market keeps its own snapshot price of a token as its base (see Catalog.applyPrices), so
 * the live pricer, the stored history and the served markets agree on every price.
 */
export interface SandboxPriceBasis {
  readonly model: PriceModel;
  readonly tokens: readonly SandboxToken[];
  /** path(t) / path(asOf) of a symbol's path (ms; not before the model's start). */
  ratioAt(symbol: string, tMs: number): number;
  /** The ratio at every whole hour of [fromMs, toMs]: ratios[i] is at fromMs + i hours. */
  hourlyRatios(symbol: string, fromMs: number, toMs: number): Float64Array;
}

export function sandboxPriceBasis(markets: readonly MarketRecord[], seed: number): SandboxPriceBasis {
  // One reference price per symbol (the first market's), one entry per token.
  const symbols = new Map<string, number>();
  const tokens = new Map<string, SandboxToken>();
  const note = (chainId: number, address: string, symbol: string, price: number | null) => {
    if (price === null || !(price > 0) || !Number.isFinite(price)) return;
    if (!symbols.has(symbol)) symbols.set(symbol, price);
    const key = `${chainId}:${address.toLowerCase()}`;
    if (!tokens.has(key)) tokens.set(key, { chainId, token: address.toLowerCase(), symbol, base: price });
  };
  for (const m of markets) {
    note(m.chainId, m.collateralAddress, m.collateral, m.collateralPrice);
    note(m.chainId, m.loanAddress, m.loan, m.loanPrice);
  }
  const model: PriceModel = createPriceModel(
    { seed, asOfMs: SANDBOX_AS_OF * 1000 },
    [...symbols].map(([symbol, priceUsd]) => ({
      key: symbol,
      symbol,
      family: assetFamily(symbol),
      priceUsd,
    })),
  );
  const refOf = (symbol: string): number => {
    const ref = symbols.get(symbol);
    if (ref === undefined) throw new Error(`internal error: no reference price for ${symbol}`);
    return ref;
  };
  return {
    model,
    tokens: [...tokens.values()],
    ratioAt: (symbol, tMs) => model.priceAt(symbol, tMs) / refOf(symbol),
    hourlyRatios(symbol, fromMs, toMs) {
      const { prices } = model.hourly(symbol, fromMs, toMs);
      const ref = refOf(symbol);
      for (let i = 0; i < prices.length; i++) prices[i] = (prices[i] as number) / ref;
      return prices;
    },
  };
}

/** The sandbox market in real time: every token's price at any instant after the history's start. */
export interface SandboxPricer {
  /** The tokens priced. */
  readonly tokens: number;
  /** Builds every path up to `tMs` a few assets at a time, yielding to the event loop between. */
  warm(tMs: number): Promise<void>;
  /** Every token's price at `tMs` (ms; not before the start of the history). */
  pricesAt(tMs: number): PriceChange[];
}

export function sandboxPricer(markets: readonly MarketRecord[], seed: number): SandboxPricer {
  const basis = sandboxPriceBasis(markets, seed);
  const symbols = [...new Set(basis.tokens.map((t) => t.symbol))];
  return {
    tokens: basis.tokens.length,
    async warm(tMs) {
      let n = 0;
      for (const symbol of symbols) {
        basis.model.priceAt(symbol, tMs);
        if (++n % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    },
    pricesAt(tMs) {
      const ratios = new Map<string, number>();
      return basis.tokens.map((t) => {
        let r = ratios.get(t.symbol);
        if (r === undefined) {
          r = basis.ratioAt(t.symbol, tMs);
          ratios.set(t.symbol, r);
        }
        return { chainId: t.chainId, token: t.token, ratio: r };
      });
    },
  };
}
