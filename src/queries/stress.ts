import type { Catalog } from '../data/catalog.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { available } from '../domain/metrics.ts';
import { fraction, significant, usd, usdOrNull } from '../domain/precision.ts';
import {
  type Concentration,
  concentration,
  healthFactorScale,
  type LiquidationTotals,
  liquidationBonus,
  liquidationTotals,
  type PositionSums,
  type Shock,
  shockResolver,
  underwaterHealthFactor,
} from '../domain/stress.ts';
import type { OracleHealth } from '../domain/types.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

/**
 * Market risk and stress tests: what price moves would liquidate, from the risk index's order
 * (src/data/risk-index.ts `below`: a binary search and prefix sums per market, never a scan of
 * the positions), with the formulas of src/domain/stress.ts.
 */

/** The collateral price drops every market risk answer shows. */
export const MARKET_SCENARIOS: readonly number[] = [-0.05, -0.1, -0.2, -0.3];

/** What liquidating, in full, every position liquidatable after a move would do. */
export interface ScenarioView {
  /** Positions liquidatable after the move (those liquidatable before included). */
  liquidatablePositions: number;
  /** Positions the move makes liquidatable (not liquidatable before it). */
  newlyLiquidatable: number;
  /** Debt of the positions liquidatable after the move, USD after it. */
  debtAtRiskUsd: number;
  collateralSeizedUsd: number;
  debtRepaidUsd: number;
  badDebtUsd: number;
}

interface Moved {
  liquidatable: PositionSums;
  before: PositionSums;
  totals: LiquidationTotals;
}

/** Relative moves of a market's collateral (`c`) and loan (`l`) tokens, by market ord. */
type MoveOf = (ord: number) => { c: number; l: number };

/**
 * Market ord after token prices move (`moveOf`): the positions then liquidatable and underwater
 * (at current amounts, valued after the move), and what liquidating them in full repays, seizes
 * and leaves as bad debt. A position of an account (Aave, Spark, Compound, Euler) is liquidatable
 * when its account's health factor is, every token of the account moved by `moveOf`.
 */
function moveMarket(model: ReadModel, ord: number, moveOf: MoveOf): Moved {
  const m = model.catalog.recordAt(ord);
  const { c, l } = moveOf(ord);
  const bonus = liquidationBonus(m.protocol, m.lltv);
  const after = (s: PositionSums): PositionSums => ({
    positions: s.positions,
    collateralUsd: s.collateralUsd * (1 + c),
    debtUsd: s.debtUsd * (1 + l),
  });
  const liquidatable = after(model.risk.belowMoved(ord, moveOf, 1));
  const underwater = after(
    model.risk.belowMoved(ord, moveOf, Math.min(1, underwaterHealthFactor(m.lltv, bonus))),
  );
  return {
    liquidatable,
    before: model.risk.below(ord, 1, 1),
    totals: liquidationTotals(liquidatable, underwater, bonus),
  };
}

/** A move of market ord's collateral token by `change`, wherever an account holds it. */
function tokenMove(model: ReadModel, ord: number, change: number): MoveOf {
  const m = model.catalog.recordAt(ord);
  const token = m.collateralAddress.toLowerCase();
  return (o) => {
    const x = model.catalog.recordAt(o);
    if (x.chainId !== m.chainId) return { c: 0, l: 0 };
    return {
      c: x.collateralAddress.toLowerCase() === token ? change : 0,
      l: x.loanAddress.toLowerCase() === token ? change : 0,
    };
  };
}

function scenarioView(x: Moved): ScenarioView {
  return {
    liquidatablePositions: x.liquidatable.positions,
    newlyLiquidatable: Math.max(0, x.liquidatable.positions - x.before.positions),
    debtAtRiskUsd: usd(x.liquidatable.debtUsd),
    collateralSeizedUsd: usd(x.totals.collateralSeizedUsd),
    debtRepaidUsd: usd(x.totals.debtRepaidUsd),
    badDebtUsd: usd(x.totals.badDebtUsd),
  };
}

export interface MarketRiskView {
  marketId: string;
  protocol: Protocol;
  chainId: number;
  collateralAsset: { symbol: string; priceUsd: number | null };
  loanAsset: { symbol: string; priceUsd: number | null };
  lltv: number;
  liquidationBonus: number;
  /** Null without a USD price of the loan token (then no position is served either). */
  supplyUsd: number | null;
  borrowUsd: number | null;
  availableLiquidityUsd: number | null;
  utilization: number;
  /** Positions with debt, their collateral and debt now. */
  borrowPositions: number;
  collateralUsd: number;
  debtUsd: number;
  liquidatableNow: ScenarioView;
  scenarios: (ScenarioView & {
    collateralPriceChange: number;
    /** availableLiquidityUsd / debtRepaidUsd; null when nothing would be repaid. */
    liquidityCoverage: number | null;
  })[];
  concentration: Concentration;
  oracleHealth: OracleHealth | null;
}

/** One market's risk now and under collateral price drops (MARKET_SCENARIOS); MARKET_NOT_FOUND when unknown. */
export function marketRisk(model: ReadModel, key: string, nowSec: number): Found<MarketRiskView> {
  const ord = model.catalog.ordOf(key);
  if (ord === undefined) throw QueryError.marketNotFound(key);
  const m = model.catalog.viewAt(ord, nowSec);
  const base = model.catalog.baseRecord(ord);
  const now = moveMarket(model, ord, () => ({ c: 0, l: 0 }));
  const all = model.risk.withDebt(ord);
  const availableUsd =
    m.supply === null || m.borrow === null ? null : Math.max(0, available(m.supply, m.borrow));
  const view: MarketRiskView = {
    marketId: m.uniqueKey,
    protocol: m.protocol,
    chainId: m.chainId,
    collateralAsset: { symbol: m.collateral, priceUsd: m.collateralPrice },
    loanAsset: { symbol: m.loan, priceUsd: m.loanPrice },
    lltv: m.lltv,
    liquidationBonus: fraction(liquidationBonus(base.protocol, base.lltv)),
    supplyUsd: m.supply,
    borrowUsd: m.borrow,
    availableLiquidityUsd: usdOrNull(availableUsd),
    utilization: m.utilization,
    borrowPositions: all.positions,
    collateralUsd: usd(all.collateralUsd),
    debtUsd: usd(all.debtUsd),
    liquidatableNow: scenarioView(now),
    scenarios: MARKET_SCENARIOS.map((change) => {
      const x = moveMarket(model, ord, tokenMove(model, ord, change));
      return {
        collateralPriceChange: change,
        ...scenarioView(x),
        liquidityCoverage:
          availableUsd !== null && x.totals.debtRepaidUsd > 0
            ? significant(availableUsd / x.totals.debtRepaidUsd)
            : null,
      };
    }),
    concentration: roundedConcentration(concentration(model.risk.debtsOf(ord))),
    oracleHealth: m.oracleHealth,
  };
  return { items: [view], itemProtocols: [m.protocol], scopeProtocols: [m.protocol] };
}

function roundedConcentration(c: Concentration): Concentration {
  return { borrowers: c.borrowers, top10Share: fraction(c.top10Share), herfindahl: fraction(c.herfindahl) };
}

// ---- stress test ------------------------------------------------------------------------------

/** Most shocks one stress test takes. */
export const MAX_SHOCKS = 10;

/**
 * `SYMBOL:change` pairs separated by commas (`WETH:-0.2,WBTC:-0.15`), checked by checkShocks.
 * INVALID_PARAMETER otherwise.
 */
export function parseShocks(text: string): Shock[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  return checkShocks(
    parts.map((p) => {
      const m = /^([^:\s]{1,64}):([+-]?(?:\d+\.?\d*|\.\d+))$/.exec(p);
      if (!m) throw QueryError.invalid('shocks', `'${p.slice(0, 80)}' is not SYMBOL:change (e.g. WETH:-0.2)`);
      const [, asset = '', change] = m;
      return { asset, change: Number(change) };
    }),
  );
}

/** Shocks as a stress test takes them: 1 to MAX_SHOCKS assets, each once (case-insensitively), each change above -1 and at most 10. */
export function checkShocks(shocks: readonly Shock[]): Shock[] {
  if (shocks.length === 0)
    throw QueryError.invalid('shocks', 'must name at least one asset, as SYMBOL:change');
  if (shocks.length > MAX_SHOCKS)
    throw QueryError.invalid('shocks', `must have at most ${MAX_SHOCKS} assets`);
  const seen = new Set<string>();
  return shocks.map(({ asset, change }) => {
    if (!(change > -1 && change <= 10)) {
      throw QueryError.invalid(
        'shocks',
        `change of ${asset} must be above -1 and at most 10 (a fraction: -0.2 = -20 %)`,
      );
    }
    if (seen.has(asset.toUpperCase())) throw QueryError.invalid('shocks', `names ${asset} twice`);
    seen.add(asset.toUpperCase());
    return { asset, change };
  });
}

export interface StressFigures extends ScenarioView {
  /** Debt of the newly liquidatable positions, USD after the moves. */
  newDebtAtRiskUsd: number;
}

export interface StressMarketView extends StressFigures {
  marketId: string;
  protocol: Protocol;
  chainId: number;
  collateralAsset: { symbol: string; change: number; via: string | null };
  loanAsset: { symbol: string; change: number; via: string | null };
  /** Health factors of the market's positions are multiplied by this. */
  healthFactorScale: number;
}

export interface StressView {
  shocks: Shock[];
  totals: StressFigures & { markets: number };
  markets: StressMarketView[];
}

export interface StressParams extends Scope {
  shocks: readonly Shock[];
  limit: number;
}

/**
 * Every market in scope whose collateral or loan asset moves (by its own shock or its
 * correlation group's, src/domain/stress.ts), after the moves: totals over them, and the
 * markets by debt at risk (largest first, then newly liquidatable, then id), `limit` of them.
 * A shock on an asset no market in scope holds is still valid (the answer is then empty); an
 * asset no market of the catalog holds, and no group name, is INVALID_PARAMETER (a typo).
 */
export function stressTest(model: ReadModel, p: StressParams): Found<StressView> {
  const { catalog } = model;
  const scope = { protocol: p.protocol, chainIds: p.chainIds };
  const moveOf = shockResolver(p.shocks);
  checkShockedAssets(model, p.shocks);
  const ords = catalog.list(scope, 0, catalog.size);
  const markets: (StressMarketView & { raw: number })[] = [];
  const totals = {
    markets: 0,
    liquidatablePositions: 0,
    newlyLiquidatable: 0,
    debtAtRiskUsd: 0,
    newDebtAtRiskUsd: 0,
    collateralSeizedUsd: 0,
    debtRepaidUsd: 0,
    badDebtUsd: 0,
  };
  for (const ord of ords) {
    const m = catalog.recordAt(ord);
    const c = moveOf(m.collateral);
    const l = moveOf(m.loan);
    if (c.change === 0 && l.change === 0) continue;
    const x = moveMarket(model, ord, (o) => {
      const mo = catalog.recordAt(o);
      return { c: moveOf(mo.collateral).change, l: moveOf(mo.loan).change };
    });
    // The newly liquidatable: a contiguous range of the market's order above the ones before.
    const newly = Math.max(0, x.liquidatable.positions - x.before.positions);
    const k = healthFactorScale(c.change, l.change);
    const newDebt = newly > 0 ? Math.max(0, x.liquidatable.debtUsd - x.before.debtUsd * (1 + l.change)) : 0;
    totals.markets++;
    totals.liquidatablePositions += x.liquidatable.positions;
    totals.newlyLiquidatable += newly;
    totals.debtAtRiskUsd += x.liquidatable.debtUsd;
    totals.newDebtAtRiskUsd += newDebt;
    totals.collateralSeizedUsd += x.totals.collateralSeizedUsd;
    totals.debtRepaidUsd += x.totals.debtRepaidUsd;
    totals.badDebtUsd += x.totals.badDebtUsd;
    if (x.liquidatable.positions === 0) continue;
    markets.push({
      marketId: m.uniqueKey,
      protocol: m.protocol,
      chainId: m.chainId,
      collateralAsset: { symbol: m.collateral, change: c.change, via: c.via },
      loanAsset: { symbol: m.loan, change: l.change, via: l.via },
      healthFactorScale: significant(k),
      ...scenarioView(x),
      newDebtAtRiskUsd: usd(newDebt),
      raw: x.liquidatable.debtUsd,
    });
  }
  markets.sort(
    (a, b) =>
      b.raw - a.raw || b.newlyLiquidatable - a.newlyLiquidatable || (a.marketId < b.marketId ? -1 : 1),
  );
  const page = markets.slice(0, p.limit).map(({ raw: _, ...v }) => v);
  const view: StressView = {
    shocks: p.shocks.map((s) => ({ asset: s.asset, change: s.change })),
    totals: {
      markets: totals.markets,
      liquidatablePositions: totals.liquidatablePositions,
      newlyLiquidatable: totals.newlyLiquidatable,
      debtAtRiskUsd: usd(totals.debtAtRiskUsd),
      newDebtAtRiskUsd: usd(totals.newDebtAtRiskUsd),
      collateralSeizedUsd: usd(totals.collateralSeizedUsd),
      debtRepaidUsd: usd(totals.debtRepaidUsd),
      badDebtUsd: usd(totals.badDebtUsd),
    },
    markets: page,
  };
  const protocols = [...new Set(page.map((v) => v.protocol))];
  return {
    items: [view],
    itemProtocols: protocols,
    scopeProtocols: catalog.protocolsIn(scope),
    total: markets.length,
  };
}

/** Symbols any market of the catalog holds, upper-case, memoized per catalog (until markets are added). */
const symbolsOf = new WeakMap<Catalog, { generation: number; symbols: Set<string> }>();

function checkShockedAssets(model: ReadModel, shocks: readonly Shock[]): void {
  let kept = symbolsOf.get(model.catalog);
  if (kept?.generation !== model.catalog.generation) {
    const symbols = new Set(['ETH', 'BTC']);
    for (const m of model.catalog.views()) {
      symbols.add(m.collateral.toUpperCase());
      symbols.add(m.loan.toUpperCase());
    }
    kept = { generation: model.catalog.generation, symbols };
    symbolsOf.set(model.catalog, kept);
  }
  const { symbols } = kept;
  const unknown = shocks.filter((s) => !symbols.has(s.asset.toUpperCase())).map((s) => s.asset);
  if (unknown.length > 0) {
    throw QueryError.invalid('shocks', `names assets no market holds: ${unknown.slice(0, 5).join(', ')}`);
  }
}
