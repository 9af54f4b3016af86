import type { MarketRecord, PriceChange } from '../../domain/types.ts';
import { SANDBOX_AS_OF } from './index.ts';
import { assetFamily } from './prices.ts';
import { createPriceModel, type PriceModel } from './simulation/index.ts';

/**
 * The sandbox market in real time: token prices at any instant after the snapshot, from the
 * simulation's price paths (simulation/price-model.ts), deterministic from the seed and the
 * time asked. A token's price at t is its snapshot price times its symbol's path ratio
 * path(t) / path(asOf): one path per symbol (a token on several chains moves alike), and each
 * market keeps its own snapshot price of the token as its base (see Catalog.applyPrices).
 */
export interface SandboxPricer {
  /** The tokens priced. */
  readonly tokens: number;
  /** Builds every path up to `tMs` a few assets at a time, yielding to the event loop between. */
  warm(tMs: number): Promise<void>;
  /** Every token's price at `tMs` (ms; not before the start of the history). */
  pricesAt(tMs: number): PriceChange[];
}

export function sandboxPricer(markets: readonly MarketRecord[], seed: number): SandboxPricer {
  // One reference price per symbol (the first market's), one entry per token.
  const symbols = new Map<string, number>();
  const tokens = new Map<string, { chainId: number; token: string; symbol: string; base: number }>();
  const note = (chainId: number, address: string, symbol: string, price: number) => {
    if (!(price > 0) || !Number.isFinite(price)) return;
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
  const list = [...tokens.values()];
  const ratioAt = (symbol: string, tMs: number) => model.priceAt(symbol, tMs) / symbols.get(symbol)!;
  return {
    tokens: list.length,
    async warm(tMs) {
      let n = 0;
      for (const symbol of symbols.keys()) {
        model.priceAt(symbol, tMs);
        if (++n % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    },
    pricesAt(tMs) {
      const ratios = new Map<string, number>();
      return list.map((t) => {
        let r = ratios.get(t.symbol);
        if (r === undefined) {
          r = ratioAt(t.symbol, tMs);
          ratios.set(t.symbol, r);
        }
        return { chainId: t.chainId, token: t.token, ratio: r };
      });
    },
  };
}
