/**
 * Aave v3 and SparkLend (an Aave v3 fork): a pooled market is shown as one market per
 * collateral/loan pair of the reserves of one pool. Identifier `<pool>_<collateral>_<loan>`.
 * Primary pairs borrow a USD stable or ETH; the other pairs are extended (large profiles).
 */
import { assetFamily } from '../../../domain/asset-family.ts';
import { defaultLltv, familyCurve, familyReserveFactor } from '../prices.ts';
import type { RefAaveReserve } from '../reference.ts';
import type { TokenRef } from '../tokens.ts';
import type { BuildContext, DraftLists, MarketDraft } from './draft.ts';
import { pairLabel, structuralUnit } from './draft.ts';

/** Relative size of Aave deployments (Ethereum Core is the largest pool by far). */
const AAVE_SIZE: Readonly<Record<string, number>> = {
  AaveV3Ethereum: 4,
  AaveV3EthereumLido: 2,
  AaveV3EthereumEtherFi: 0.8,
  AaveV3EthereumHorizon: 0.5,
  AaveV3Arbitrum: 1.5,
  AaveV3Base: 1.5,
  AaveV3Avalanche: 1,
  AaveV3Polygon: 0.8,
  AaveV3Optimism: 0.8,
  AaveV3Plasma: 1.2,
};

/** Deprecated deployments: mostly empty. */
const AAVE_DEPRECATED = new Set(['AaveV3Harmony']);

/** Below this a liquidation threshold is a placeholder, not a usable collateral factor. */
const MIN_LLTV = 0.05;

/** Without risk data: savings wrappers (sDAI, sUSDS...) and Pendle PTs are collateral-only. */
function isBorrowable(symbol: string): boolean {
  const family = assetFamily(symbol);
  return family !== 'usd-yield' && family !== 'pt';
}

/** A pair is primary when it borrows a plain USD stable or ETH. */
function isPrimaryLoan(symbol: string): boolean {
  const f = assetFamily(symbol);
  return f === 'usd' || f === 'eth';
}

function jitter(key: string): number {
  return 0.8 + 0.4 * structuralUnit(`jitter|${key}`);
}

export function aaveDrafts(ctx: BuildContext): DraftLists {
  const lists: DraftLists = { primary: [], extended: [] };
  const byMarket = new Map<string, RefAaveReserve[]>();
  for (const r of ctx.ref.aaveReserves) {
    const list = byMarket.get(r.market);
    if (list) list.push(r);
    else byMarket.set(r.market, [r]);
  }
  for (const market of ctx.ref.aaveMarkets) {
    const reserves = byMarket.get(market.market) ?? [];
    const { chainId, pool } = market;
    const feedOf = (r: RefAaveReserve) =>
      ctx.oracles.feedAt(chainId, r.oracle, {
        description: r.risk?.oracleDescription ?? `${r.symbol} / USD (Aave price source)`,
        pair: `${r.symbol}/USD`,
      });
    for (const c of reserves) {
      if (c.risk && (!c.risk.usageAsCollateralEnabled || !c.risk.isActive)) continue;
      if (c.risk && !(c.risk.liquidationThreshold > 0 && c.risk.liquidationThreshold < 1)) continue;
      for (const l of reserves) {
        if (l.underlying === c.underlying) continue;
        if (l.risk && (!l.risk.borrowingEnabled || !l.risk.isActive)) continue;
        const identifier = `${pool}_${c.underlying}_${l.underlying}`;
        const collateral: TokenRef = ctx.tokens.ref(chainId, c.underlying, c.symbol);
        const loan: TokenRef = ctx.tokens.ref(chainId, l.underlying, l.symbol);
        if (!l.risk && !isBorrowable(l.symbol)) continue;
        let lltv =
          c.risk?.liquidationThreshold ?? defaultLltv(c.symbol, l.symbol, structuralUnit(identifier));
        let eMode = false;
        let bonus = c.risk?.liquidationBonus;
        for (const e of market.eModes) {
          if (!(e.liquidationThreshold > lltv && e.liquidationThreshold < 1)) continue;
          if (e.collateralAssets.includes(c.underlying) && e.borrowableAssets.includes(l.underlying)) {
            lltv = e.liquidationThreshold;
            eMode = true;
            bonus = e.liquidationBonus ?? bonus;
          }
        }
        // A token LT (Aave lists e-mode-only collateral, such as PTs, at 0.1 %) is no market.
        if (lltv < MIN_LLTV && !eMode) continue;
        const d: MarketDraft = {
          protocol: 'aave',
          chainId,
          identifier,
          label: pairLabel(collateral, loan),
          collateral,
          loan,
          lltv,
          vault: null,
          oracle: () => ctx.oracles.build(market.oracle, [feedOf(c), feedOf(l)], false),
          curve: familyCurve(l.symbol, jitter(identifier)),
          reserveFactor: l.risk?.reserveFactor ?? familyReserveFactor(l.symbol),
          liquidationBonus: bonus !== undefined && bonus > 0 && bonus < 0.5 ? bonus : null,
          sizeScale: AAVE_SIZE[market.market] ?? 0.3,
          emptyChance: AAVE_DEPRECATED.has(market.market) ? 0.7 : 0.04,
        };
        (isPrimaryLoan(l.symbol) ? lists.primary : lists.extended).push(d);
      }
    }
  }
  return lists;
}

export function sparkDrafts(ctx: BuildContext): DraftLists {
  const lists: DraftLists = { primary: [], extended: [] };
  const { market, reserves } = ctx.ref.spark;
  const { chainId, pool, oracle } = market;
  for (const c of reserves) {
    for (const l of reserves) {
      if (l.underlying === c.underlying || !isBorrowable(l.symbol)) continue;
      const identifier = `${pool}_${c.underlying}_${l.underlying}`;
      const collateral = ctx.tokens.ref(chainId, c.underlying, c.symbol);
      const loan = ctx.tokens.ref(chainId, l.underlying, l.symbol);
      lists.primary.push({
        protocol: 'spark',
        chainId,
        identifier,
        label: pairLabel(collateral, loan),
        collateral,
        loan,
        lltv: defaultLltv(c.symbol, l.symbol, structuralUnit(identifier)),
        vault: null,
        oracle: () => {
          // One AaveOracle per pool: the key is the pool oracle, so an asset gets the same feed in every pair.
          const route = ctx.oracles.route(chainId, c.symbol, l.symbol, oracle);
          if (route) return ctx.oracles.build(oracle, route.feeds, false, route.warnings);
          return ctx.oracles.unlisted(chainId, oracle, c.symbol, l.symbol, false);
        },
        curve: familyCurve(l.symbol, jitter(identifier)),
        reserveFactor: familyReserveFactor(l.symbol),
        liquidationBonus: null,
        sizeScale: 1.5,
        emptyChance: 0.05,
      });
    }
  }
  return lists;
}
