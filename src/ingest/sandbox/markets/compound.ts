/**
 * Compound v3 (Comet): one market per collateral of a comet; the loan is the comet's base
 * token, lltv its liquidateCollateralFactor, the borrow curve the comet's own configured one.
 * Identifier `<comet>_<collateral>`.
 */

import { assetFamily, feedSymbol } from '../../../domain/asset-family.ts';
import type { RateCurve } from '../../../domain/rates.ts';
import { familyCurve } from '../prices.ts';
import type { BuildContext, DraftLists } from './draft.ts';
import { pairLabel, structuralUnit } from './draft.ts';

function cometCurve(r: {
  borrowBase: number;
  borrowSlopeLow: number;
  borrowSlopeHigh: number;
  borrowKink: number;
}): RateCurve | null {
  const curve = {
    base: r.borrowBase,
    slopeLow: r.borrowSlopeLow,
    slopeHigh: r.borrowSlopeHigh,
    kink: r.borrowKink,
  };
  const ok =
    curve.base >= 0 && curve.slopeLow >= 0 && curve.slopeHigh >= 0 && curve.kink > 0 && curve.kink <= 1;
  return ok ? curve : null;
}

export function compoundDrafts(ctx: BuildContext): DraftLists {
  const lists: DraftLists = { primary: [], extended: [] };
  for (const comet of ctx.ref.comets) {
    const { chainId } = comet;
    const loan = ctx.tokens.ref(chainId, comet.baseToken, comet.baseSymbol);
    const family = assetFamily(comet.baseSymbol);
    // Comet price feeds are denominated in USD, or in the base asset for ETH/BTC comets.
    const quote =
      family === 'usd' || family === 'usd-yield' || family === 'eur' ? 'USD' : feedSymbol(comet.baseSymbol);
    const curve = cometCurve(comet.rates);
    for (const col of comet.collaterals) {
      const lltv = col.liquidateCollateralFactor;
      if (lltv === null || !(lltv > 0 && lltv < 1)) continue;
      const identifier = `${comet.comet}_${col.address}`;
      const collateral = ctx.tokens.ref(chainId, col.address, col.symbol);
      lists.primary.push({
        protocol: 'compound',
        chainId,
        identifier,
        label: pairLabel(collateral, loan),
        collateral,
        loan,
        lltv,
        vault: null,
        oracle: () => {
          // Deployment configs leave some price feeds unset (set later by governance): those
          // legs are resolved from the chain's listed feeds instead.
          const colFeed = col.priceFeed;
          if (!colFeed) {
            const route = ctx.oracles.route(chainId, col.symbol, comet.baseSymbol, comet.comet);
            const first = route?.feeds[0];
            if (!route || !first) return null;
            return ctx.oracles.build(first.address, route.feeds, false, route.warnings);
          }
          const feeds = [
            ctx.oracles.feedAt(chainId, colFeed, {
              description: `${col.symbol} / ${quote}`,
              pair: `${col.symbol}/${quote}`,
            }),
          ];
          if (comet.baseTokenPriceFeed && comet.baseTokenPriceFeed !== colFeed) {
            feeds.push(
              ctx.oracles.feedAt(chainId, comet.baseTokenPriceFeed, {
                description: `${comet.baseSymbol} / ${quote}`,
                pair: `${comet.baseSymbol}/${quote}`,
              }),
            );
          }
          return ctx.oracles.build(colFeed, feeds, false);
        },
        curve: curve ?? familyCurve(comet.baseSymbol, 1),
        reserveFactor: 0.1 + 0.1 * structuralUnit(`compound-rf|${comet.comet}`),
        liquidationBonus:
          col.liquidationFactor && col.liquidationFactor > 0.5 && col.liquidationFactor < 1
            ? 1 - col.liquidationFactor
            : null,
        sizeScale: 1,
        emptyChance: 0.04,
      });
    }
  }
  return lists;
}
