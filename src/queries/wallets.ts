import type { MarketView } from '../data/catalog.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { AccountView, PositionAtRiskView } from '../data/risk-index.ts';
import { accountLiquidationPrice, liquidationRatio } from '../domain/accounts.ts';
import type { Protocol } from '../domain/enums.ts';
import { distanceToLiq, leverage, liquidationPrice } from '../domain/metrics.ts';
import { fraction, significant, significantOrNull, usd } from '../domain/precision.ts';
import type { Page } from './assets.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { Found, Scope } from './types.ts';

/**
 * A wallet's positions and its portfolio across protocols and chains, from the risk index's
 * wallet lookup (every position of the address, at current prices; for Euler also those of its
 * EVC sub-accounts). Positions are per market: pooled protocols' accounts (src/domain/accounts.ts)
 * are held as one position per collateral and loan pair, and every position of an account shows
 * the account's health factor, leverage and distance to liquidation; its liquidation price is
 * the price of its collateral at which the account's health factor reaches 1.
 */

/** A position as served: the PositionAtRisk shape, debt-free positions included, plus prices. */
export interface WalletPositionView extends Omit<PositionAtRiskView, 'healthFactor' | 'distanceToLiq'> {
  /** Null without debt. */
  healthFactor: number | null;
  /** Null without debt. */
  distanceToLiq: number | null;
  /** The collateral's USD price now. */
  collateralPrice: number;
  /**
   * The USD price of the collateral (or of the `asset` asked for) at which the health factor
   * reaches 1, all else fixed; null without debt, or when the position does not hold the asset.
   */
  liquidationPrice: number | null;
  /** The token whose USD price `liquidationPrice` is; null with it. */
  liquidationPriceToken: { address: string; symbol: string } | null;
}

export interface Held {
  i: number;
  ord: number;
  /** The position's own address (for Euler, the sub-account, which may differ from the wallet asked). */
  user: string;
  /** Its account (pooled protocols); null for an isolated position. */
  account: AccountView | null;
  /** Its market's USD prices now (a market without both serves no position: "Real sources" (docs/decisions.md)). */
  collateralPrice: number;
  loanPrice: number;
  collateralUsd: number;
  borrowUsd: number;
  supplyUsd: number;
  healthFactor: number;
}

/**
 * The wallet's positions in scope that hold anything (closed ones, all zero, are left out), in
 * markets with a USD price of both tokens (the sources serve no other; a position's USD amounts
 * are stated at them).
 */
export function held(model: ReadModel, address: string, scope: Scope): Held[] {
  const { catalog, risk } = model;
  const out: Held[] = [];
  for (const i of risk.positionsOf(address)) {
    const a = risk.amountsOf(i);
    if (!(a.collateralUsd > 0 || a.borrowUsd > 0 || a.supplyUsd > 0)) continue;
    const m = catalog.recordAt(a.ord);
    if (scope.protocol !== undefined && m.protocol !== scope.protocol) continue;
    if (scope.chainIds !== undefined && !scope.chainIds.includes(m.chainId)) continue;
    if (m.collateralPrice === null || m.loanPrice === null) continue;
    out.push({
      i,
      ...a,
      user: risk.stateOf(i).user,
      account: risk.accountOf(i),
      collateralPrice: m.collateralPrice,
      loanPrice: m.loanPrice,
    });
  }
  return out;
}

/**
 * The USD price of one of a position's tokens (`side`) at which its health factor reaches 1,
 * every other price fixed: for a position of an account, the account's (all its positions in
 * that token move together; src/domain/accounts.ts); for an isolated one, price / hf for its
 * collateral and price x hf for its debt. Null without debt, or when no price of the token does.
 */
export function tokenLiquidationPrice(model: ReadModel, h: Held, side: 'collateral' | 'debt'): number | null {
  const m = model.catalog.recordAt(h.ord);
  const price = side === 'collateral' ? h.collateralPrice : h.loanPrice;
  if (!h.account) return liquidationPrice(price, h.healthFactor, side);
  const token = (side === 'collateral' ? m.collateralAddress : m.loanAddress).toLowerCase();
  return accountLiquidationPrice(price, h.account.totals, model.risk.exposureOf(h.i, token));
}

/**
 * The liquidation price of a position: of `asset` (lower-case address) when given, else of its
 * collateral; null when the position does not hold the asset (or has no debt).
 */
function liquidationPriceOf(
  model: ReadModel,
  m: MarketView,
  h: Held,
  asset: string | undefined,
): Pick<WalletPositionView, 'liquidationPrice' | 'liquidationPriceToken'> {
  let price: number | null = null;
  let token: WalletPositionView['liquidationPriceToken'] = null;
  if (asset === undefined || asset === m.collateralAddress.toLowerCase()) {
    price = tokenLiquidationPrice(model, h, 'collateral');
    token = { address: m.collateralAddress.toLowerCase(), symbol: m.collateral };
  } else if (asset === m.loanAddress.toLowerCase()) {
    price = tokenLiquidationPrice(model, h, 'debt');
    token = { address: m.loanAddress.toLowerCase(), symbol: m.loan };
  }
  return price === null
    ? { liquidationPrice: null, liquidationPriceToken: null }
    : { liquidationPrice: significant(price), liquidationPriceToken: token };
}

/** A position's leverage: its account's (collateral / equity of the account's totals), else its own. */
function leverageOf(h: Held): number | null {
  return h.account
    ? leverage(h.account.totals.collateralUsd, h.account.totals.debtUsd)
    : leverage(h.collateralUsd, h.borrowUsd);
}

function positionView(model: ReadModel, h: Held, asset?: string): WalletPositionView {
  const m = model.catalog.recordAt(h.ord);
  const hasDebt = Number.isFinite(h.healthFactor);
  return {
    protocol: m.protocol,
    chainId: m.chainId,
    user: { address: h.user },
    healthFactor: hasDebt ? significant(h.healthFactor) : null,
    state: {
      collateralUsd: usd(h.collateralUsd),
      borrowAssetsUsd: usd(h.borrowUsd),
      supplyAssetsUsd: usd(h.supplyUsd),
    },
    market: {
      uniqueKey: m.uniqueKey,
      collateralAsset: { symbol: m.collateral },
      loanAsset: { symbol: m.loan },
      lltv: m.lltv,
    },
    leverage: significantOrNull(leverageOf(h)),
    distanceToLiq: hasDebt ? fraction(distanceToLiq(h.healthFactor)) : null,
    collateralPrice: h.collateralPrice,
    ...liquidationPriceOf(model, m, h, asset),
  };
}

export interface WalletPositionsParams extends Scope {
  /** Lower-case 0x address. */
  address: string;
  /** Lower-case token address: liquidation prices of this asset (default: each position's collateral). */
  asset?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** A wallet's positions in scope, by market uniqueKey (an order prices never move). */
export function walletPositions(model: ReadModel, p: WalletPositionsParams): Page<WalletPositionView> {
  const after = decodeCursor(p.cursor, 'positions', ['string']);
  const all = held(model, p.address, p);
  const keyOf = (h: Held) => model.catalog.recordAt(h.ord).uniqueKey;
  all.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
  const rest = after ? all.filter((h) => keyOf(h) > after[0]) : all;
  const page = rest.slice(0, p.limit);
  const last = page.at(-1);
  return {
    items: page.map((h) => positionView(model, h, p.asset)),
    itemProtocols: page.map((h) => model.catalog.recordAt(h.ord).protocol),
    scopeProtocols: model.catalog.protocolsIn(p),
    total: all.length,
    ...(last && rest.length > p.limit ? { nextCursor: encodeCursor('positions', [keyOf(last)]) } : {}),
  };
}

export interface Totals {
  collateralUsd: number;
  debtUsd: number;
  supplyUsd: number;
  /** collateral + supply - debt. */
  netUsd: number;
  positions: number;
  /** The lowest health factor of the positions with debt; null when none has debt. */
  weakestHealthFactor: number | null;
}

export interface LiquidationMove {
  chainId: number;
  token: string;
  symbol: string;
  side: 'collateral' | 'debt';
  /** The USD value the wallet holds of it on that side. */
  exposureUsd: number;
  priceUsd: number;
  /** The relative move of its price, all others fixed, that makes the first position liquidatable; 0 when one is already. */
  move: number;
  priceAtLiquidation: number;
  /** The position that would be liquidated first. */
  marketId: string;
}

export interface PortfolioView {
  address: string;
  totals: Totals;
  /** The position with the lowest health factor; null when none has debt. */
  weakestPosition: string | null;
  byProtocol: (Totals & { protocol: Protocol })[];
  byChain: (Totals & { chainId: number })[];
  positions: WalletPositionView[];
  liquidationMoves: LiquidationMove[];
}

function totalsOf(list: readonly Held[]): Totals {
  let collateral = 0;
  let debt = 0;
  let supply = 0;
  let weakest = Number.POSITIVE_INFINITY;
  for (const h of list) {
    collateral += h.collateralUsd;
    debt += h.borrowUsd;
    supply += h.supplyUsd;
    weakest = Math.min(weakest, h.healthFactor);
  }
  return {
    collateralUsd: usd(collateral),
    debtUsd: usd(debt),
    supplyUsd: usd(supply),
    netUsd: usd(collateral + supply - debt),
    positions: list.length,
    weakestHealthFactor: Number.isFinite(weakest) ? significant(weakest) : null,
  };
}

function groupBy<K>(list: readonly Held[], key: (h: Held) => K): Map<K, Held[]> {
  const out = new Map<K, Held[]>();
  for (const h of list) {
    const k = key(h);
    const l = out.get(k);
    if (l) l.push(h);
    else out.set(k, [h]);
  }
  return out;
}

/**
 * A wallet across protocols and chains in scope: totals, per protocol and per chain, every
 * position (weakest first), and for each asset backing or owed by a borrow position the price
 * move that makes its first position liquidatable (see moveToLiquidation; closest first).
 */
export function portfolio(model: ReadModel, address: string, scope: Scope): Found<PortfolioView> {
  const { catalog } = model;
  const list = held(model, address, scope);
  list.sort(
    (a, b) => a.healthFactor - b.healthFactor || b.borrowUsd - a.borrowUsd || (a.ord < b.ord ? -1 : 1),
  );
  const weakest = list.find((h) => Number.isFinite(h.healthFactor));
  const byProtocol = [...groupBy(list, (h) => catalog.recordAt(h.ord).protocol)]
    .map(([protocol, l]) => ({ protocol, ...totalsOf(l) }))
    .sort(
      (a, b) =>
        b.collateralUsd + b.supplyUsd - (a.collateralUsd + a.supplyUsd) || (a.protocol < b.protocol ? -1 : 1),
    );
  const byChain = [...groupBy(list, (h) => catalog.recordAt(h.ord).chainId)]
    .map(([chainId, l]) => ({ chainId, ...totalsOf(l) }))
    .sort((a, b) => b.collateralUsd + b.supplyUsd - (a.collateralUsd + a.supplyUsd) || a.chainId - b.chainId);
  // Per asset and side: the move reaching health factor 1 first, over the positions holding it.
  const moves = new Map<string, LiquidationMove>();
  for (const h of list) {
    if (!Number.isFinite(h.healthFactor)) continue;
    const m = catalog.recordAt(h.ord);
    const legs = [
      ['collateral', m.collateralAddress, m.collateral, h.collateralPrice, h.collateralUsd],
      ['debt', m.loanAddress, m.loan, h.loanPrice, h.borrowUsd],
    ] as const;
    for (const [side, token, symbol, price, exposure] of legs) {
      if (!(exposure > 0)) continue;
      // The account's (or the isolated position's) price ratio reaching health factor 1.
      const ratio = h.account
        ? liquidationRatio(h.account.totals, model.risk.exposureOf(h.i, token.toLowerCase()))
        : h.healthFactor > 0
          ? side === 'collateral'
            ? 1 / h.healthFactor
            : h.healthFactor
          : null;
      if (ratio === null) continue;
      const raw = ratio - 1;
      // A collateral reaches it falling, a debt rising; the other way it never does.
      if (
        (side === 'collateral' && raw > 0 && h.healthFactor >= 1) ||
        (side === 'debt' && raw < 0 && h.healthFactor >= 1)
      )
        continue;
      // Collateral falls (raw <= 0), debt rises (raw >= 0): the smallest change reaches first.
      const move = side === 'collateral' ? Math.min(0, raw) : Math.max(0, raw);
      const key = `${side}:${m.chainId}:${token.toLowerCase()}`;
      const prev = moves.get(key);
      const exposureUsd = (prev?.exposureUsd ?? 0) + exposure;
      if (!prev || Math.abs(move) < Math.abs(prev.move)) {
        moves.set(key, {
          chainId: m.chainId,
          token: token.toLowerCase(),
          symbol,
          side,
          exposureUsd,
          priceUsd: price,
          move,
          // (price x ratio, not price x (1 + move), which loses digits for a large hf)
          priceAtLiquidation: move === 0 ? price : price * ratio,
          marketId: m.uniqueKey,
        });
      } else prev.exposureUsd = exposureUsd;
    }
  }
  const liquidationMoves = [...moves.values()]
    .sort((a, b) => Math.abs(a.move) - Math.abs(b.move) || b.exposureUsd - a.exposureUsd)
    .map((m) => ({
      ...m,
      exposureUsd: usd(m.exposureUsd),
      move: fraction(m.move),
      priceAtLiquidation: significant(m.priceAtLiquidation),
    }));
  const protocols = byProtocol.map((p) => p.protocol);
  return {
    items: [
      {
        address,
        totals: totalsOf(list),
        weakestPosition: weakest ? catalog.recordAt(weakest.ord).uniqueKey : null,
        byProtocol,
        byChain,
        positions: list.map((h) => positionView(model, h)),
        liquidationMoves,
      },
    ],
    itemProtocols: protocols,
    scopeProtocols: catalog.protocolsIn(scope),
  };
}
