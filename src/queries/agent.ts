import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { collateralToHealthFactor, repayToHealthFactor } from '../domain/metrics.ts';
import { must } from '../domain/must.ts';
import { fraction, significant, significantOrNull, usd, usdOrNull } from '../domain/precision.ts';
import { QueryError } from './errors.ts';
import { type MarketRiskView, marketRisk } from './stress.ts';
import type { Found, Scope } from './types.ts';
import { held, tokenLiquidationPrice } from './wallets.ts';

/**
 * The agent API: compact, deterministic answers for AI agents, from the same read model and
 * query functions as the rest of the API. Every flag carries its reason in plain language,
 * with the figures it was decided on; the thresholds are constants here (and in the README).
 */

/** Default health factor a wallet's positions are brought back to. */
export const DEFAULT_TARGET_HEALTH_FACTOR = 1.25;
/** Below this health factor a position is flagged as near liquidation. */
export const NEAR_LIQUIDATION_HF = 1.1;
/** Utilization at or above which a market is flagged (suppliers may be unable to withdraw). */
export const HIGH_UTILIZATION = 0.95;
/** Herfindahl index of the debt at or above which a market's borrowers are flagged as concentrated. */
export const CONCENTRATED_HHI = 0.25;

export type Severity = 'critical' | 'warning' | 'info';

export interface Flag {
  code: string;
  severity: Severity;
  /** The market it is about; null for the whole wallet. */
  marketId: string | null;
  reason: string;
}

export type RiskLevel = 'none' | 'low' | 'medium' | 'high' | 'critical';

/**
 * A wallet's risk level from its weakest health factor: critical below 1 (liquidatable), high
 * below 1.1, medium below 1.25, low otherwise; none without debt.
 */
export function riskLevelOf(weakest: number | null): RiskLevel {
  if (weakest === null) return 'none';
  if (weakest < 1) return 'critical';
  if (weakest < NEAR_LIQUIDATION_HF) return 'high';
  if (weakest < DEFAULT_TARGET_HEALTH_FACTOR) return 'medium';
  return 'low';
}

const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)} %`;
const money = (x: number) =>
  `$${x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const num = (x: number) => String(significant(x, 4));

export interface WalletRiskPosition {
  marketId: string;
  protocol: Protocol;
  chainId: number;
  collateral: { symbol: string; priceUsd: number; liquidationPriceUsd: number | null };
  loan: { symbol: string; priceUsd: number };
  collateralUsd: number;
  debtUsd: number;
  healthFactor: number;
  /** What brings the health factor to the target: repaying debt, or adding collateral (either alone). */
  toTarget: {
    repayUsd: number;
    repayAmount: number;
    addCollateralUsd: number | null;
    addCollateralAmount: number | null;
  };
}

export interface WalletRiskView {
  address: string;
  riskLevel: RiskLevel;
  weakestHealthFactor: number | null;
  targetHealthFactor: number;
  collateralUsd: number;
  debtUsd: number;
  borrowPositions: number;
  flags: Flag[];
  /** Positions with debt, weakest first. */
  positions: WalletRiskPosition[];
}

/**
 * A wallet's borrow positions in scope, weakest first, each with what brings it back to
 * `target` (repayToHealthFactor, collateralToHealthFactor, in USD and in tokens at their price
 * now), and flags: LIQUIDATABLE (health factor below 1), NEAR_LIQUIDATION (below 1.1), BELOW_TARGET,
 * STALE_ORACLE (a position's market oracle is past its heartbeat).
 */
export function walletRisk(
  model: ReadModel,
  address: string,
  scope: Scope & { targetHealthFactor: number },
  nowSec: number,
): Found<WalletRiskView> {
  const { catalog } = model;
  const target = scope.targetHealthFactor;
  const list = held(model, address, scope).filter((h) => h.borrowUsd > 0);
  list.sort((a, b) => a.healthFactor - b.healthFactor || b.borrowUsd - a.borrowUsd || a.ord - b.ord);
  const flags: Flag[] = [];
  let collateral = 0;
  let debt = 0;
  const positions = list.map((h): WalletRiskPosition => {
    const m = catalog.viewAt(h.ord, nowSec);
    collateral += h.collateralUsd;
    debt += h.borrowUsd;
    const hf = h.healthFactor;
    // A position of an account: the account's debt is what repaying reduces, and collateral
    // added counts at this market's threshold toward the account's health factor.
    const repay = repayToHealthFactor(h.account ? h.account.totals.debtUsd : h.borrowUsd, hf, target);
    const add = h.account
      ? hf < target && m.lltv > 0
        ? (target * h.account.totals.debtUsd - h.account.totals.weightedCollateralUsd) / m.lltv
        : hf < target
          ? null
          : 0
      : collateralToHealthFactor(h.collateralUsd, hf, target);
    const where = `${m.collateral}/${m.loan} on ${m.protocol} (chain ${m.chainId})`;
    const whose = h.account ? `${where} position's account` : `${where} position`;
    const fix = `repay ${money(repay)} of ${m.loan}${add === null ? '' : ` or add ${money(add)} of ${m.collateral}`} to reach ${num(target)}`;
    if (hf < 1) {
      flags.push({
        code: 'LIQUIDATABLE',
        severity: 'critical',
        marketId: m.uniqueKey,
        reason: `The ${whose} has health factor ${num(hf)}, below 1: it can be liquidated now; ${fix}.`,
      });
    } else if (hf < NEAR_LIQUIDATION_HF) {
      flags.push({
        code: 'NEAR_LIQUIDATION',
        severity: 'warning',
        marketId: m.uniqueKey,
        reason: `The ${whose} has health factor ${num(hf)}: a ${pct(1 - 1 / hf)} fall of ${h.account ? 'its collateral' : m.collateral} against ${h.account ? 'its debt' : m.loan} liquidates it; ${fix}.`,
      });
    } else if (hf < target) {
      flags.push({
        code: 'BELOW_TARGET',
        severity: 'info',
        marketId: m.uniqueKey,
        reason: `The ${whose} has health factor ${num(hf)}, below the target ${num(target)}; ${fix}.`,
      });
    }
    if (m.oracleHealth?.isStale) {
      flags.push({
        code: 'STALE_ORACLE',
        severity: 'warning',
        marketId: m.uniqueKey,
        reason: `The oracle of ${where} last updated ${m.oracleHealth.secondsSinceUpdate} s ago, ${num(m.oracleHealth.stalenessRatio)} times its ${m.oracleHealth.expectedHeartbeatSeconds} s heartbeat: the health factor may not reflect the market price.`,
      });
    }
    return {
      marketId: m.uniqueKey,
      protocol: m.protocol,
      chainId: m.chainId,
      collateral: {
        symbol: m.collateral,
        priceUsd: h.collateralPrice,
        liquidationPriceUsd: significantOrNull(tokenLiquidationPrice(model, h, 'collateral')),
      },
      loan: { symbol: m.loan, priceUsd: h.loanPrice },
      collateralUsd: usd(h.collateralUsd),
      debtUsd: usd(h.borrowUsd),
      healthFactor: significant(hf),
      toTarget: {
        repayUsd: usd(repay),
        repayAmount: h.loanPrice > 0 ? significant(repay / h.loanPrice) : 0,
        addCollateralUsd: usdOrNull(add),
        addCollateralAmount:
          add === null || !(h.collateralPrice > 0) ? null : significant(add / h.collateralPrice),
      },
    };
  });
  const weakest = list[0]?.healthFactor ?? null;
  const protocols = [...new Set(positions.map((p) => p.protocol))];
  return {
    items: [
      {
        address,
        riskLevel: riskLevelOf(weakest),
        weakestHealthFactor: weakest === null ? null : significant(weakest),
        targetHealthFactor: target,
        collateralUsd: usd(collateral),
        debtUsd: usd(debt),
        borrowPositions: positions.length,
        flags,
        positions,
      },
    ],
    itemProtocols: protocols,
    scopeProtocols: catalog.protocolsIn(scope),
  };
}

export interface MarketBriefView {
  marketId: string;
  protocol: Protocol;
  chainId: number;
  /** One sentence: the market, its size and use, and its most severe flag. */
  summary: string;
  keyFigures: {
    supplyUsd: number | null;
    borrowUsd: number | null;
    utilization: number;
    supplyApy: number;
    borrowApy: number;
    availableLiquidityUsd: number | null;
    lltv: number;
    borrowPositions: number;
    liquidatablePositions: number;
    debtLiquidatableUsd: number;
    oracleStalenessRatio: number | null;
    top10BorrowerShare: number;
  };
  flags: Omit<Flag, 'marketId'>[];
  /** The -10 % and -20 % collateral scenarios of the market's risk. */
  stress: {
    collateralPriceChange: number;
    newlyLiquidatable: number;
    debtAtRiskUsd: number;
    badDebtUsd: number;
  }[];
}

/**
 * A market in a few figures and flags: LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION (>= 95 %),
 * STALE_ORACLE, NO_ORACLE, CONCENTRATED_BORROWERS (Herfindahl >= 0.25), BAD_DEBT_UNDER_STRESS (a
 * 20 % collateral fall leaves bad debt), THIN_LIQUIDITY (a 10 % fall's liquidations would repay
 * more than the market holds), NO_USD_PRICE (a token without a USD price: its price is null and,
 * for the loan token, the USD figures too, told in loan-token units; no position is served). From marketRisk: the same figures as GET /risk/markets/{id}.
 */
export function marketBrief(model: ReadModel, key: string, nowSec: number): Found<MarketBriefView> {
  const found = marketRisk(model, key, nowSec);
  const r: MarketRiskView = must(found.items[0], `the risk of market ${key}`);
  const ord = model.catalog.ordOf(key);
  if (ord === undefined) throw QueryError.marketNotFound(key);
  const m = model.catalog.viewAt(ord, nowSec);
  const pair = `${r.collateralAsset.symbol}/${r.loanAsset.symbol}`;
  // An amount of the loan token: in USD, else in its units, else unknown.
  const amount = (usdAmount: number | null, units: number | null) =>
    usdAmount !== null ? money(usdAmount) : units !== null ? `${num(units)} ${m.loan}` : 'an unknown amount';
  const availableUnits =
    m.supplyAssets !== null && m.borrowAssets !== null ? Math.max(0, m.supplyAssets - m.borrowAssets) : null;
  const flags: Omit<Flag, 'marketId'>[] = [];
  const unpriced = [
    ...(r.collateralAsset.priceUsd === null ? [r.collateralAsset.symbol] : []),
    ...(r.loanAsset.priceUsd === null ? [r.loanAsset.symbol] : []),
  ];
  if (unpriced.length > 0) {
    flags.push({
      code: 'NO_USD_PRICE',
      severity: 'warning',
      reason:
        `No USD price is known for ${unpriced.join(' and ')}: ` +
        (r.loanAsset.priceUsd === null
          ? "the market's USD figures are null (amounts are in loan-token units)"
          : 'its price is null (the loan side is in USD)') +
        ', and its positions are not served until it has one.',
    });
  }
  const now = r.liquidatableNow;
  if (now.liquidatablePositions > 0) {
    flags.push({
      code: 'LIQUIDATABLE_POSITIONS',
      severity: 'critical',
      reason: `${now.liquidatablePositions} position(s) with ${money(now.debtAtRiskUsd)} of debt are below health factor 1 and can be liquidated now.`,
    });
  }
  if (r.utilization >= HIGH_UTILIZATION) {
    flags.push({
      code: 'HIGH_UTILIZATION',
      severity: 'warning',
      reason: `Utilization is ${pct(r.utilization)}: only ${amount(r.availableLiquidityUsd, availableUnits)} can be withdrawn or borrowed, and borrow rates sit at the top of the curve.`,
    });
  }
  if (r.oracleHealth === null) {
    flags.push({
      code: 'NO_ORACLE',
      severity: 'warning',
      reason: 'No oracle is known for this market: its prices cannot be checked for freshness.',
    });
  } else if (r.oracleHealth.isStale) {
    flags.push({
      code: 'STALE_ORACLE',
      severity: 'warning',
      reason: `The oracle last updated ${r.oracleHealth.secondsSinceUpdate} s ago, ${num(r.oracleHealth.stalenessRatio)} times its ${r.oracleHealth.expectedHeartbeatSeconds} s heartbeat.`,
    });
  }
  if (r.concentration.herfindahl >= CONCENTRATED_HHI) {
    flags.push({
      code: 'CONCENTRATED_BORROWERS',
      severity: 'info',
      reason: `The 10 largest of ${r.concentration.borrowers} borrowers owe ${pct(r.concentration.top10Share)} of the debt (Herfindahl ${num(r.concentration.herfindahl)}): a few liquidations would move the market.`,
    });
  }
  const m10 = must(
    r.scenarios.find((s) => s.collateralPriceChange === -0.1),
    'the scenario of a 10 % collateral fall',
  );
  const m20 = must(
    r.scenarios.find((s) => s.collateralPriceChange === -0.2),
    'the scenario of a 20 % collateral fall',
  );
  if (m20.badDebtUsd > 0) {
    flags.push({
      code: 'BAD_DEBT_UNDER_STRESS',
      severity: 'warning',
      reason: `A 20 % fall of ${r.collateralAsset.symbol} would leave ${money(m20.badDebtUsd)} of debt its collateral no longer covers.`,
    });
  }
  if (m10.liquidityCoverage !== null && m10.liquidityCoverage < 1) {
    flags.push({
      code: 'THIN_LIQUIDITY',
      severity: 'info',
      reason: `A 10 % fall of ${r.collateralAsset.symbol} would have liquidators repay ${money(m10.debtRepaidUsd)}, more than the ${amount(r.availableLiquidityUsd, availableUnits)} the market holds.`,
    });
  }
  const order: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
  flags.sort((a, b) => order[a.severity] - order[b.severity]);
  const top = flags[0];
  const summary =
    `${pair} on ${r.protocol} (chain ${r.chainId}): ${amount(r.supplyUsd, m.supplyAssets)} supplied, ${pct(r.utilization)} borrowed by ${r.borrowPositions} position(s), LLTV ${pct(r.lltv)}` +
    (top ? `; ${top.code.toLowerCase().replaceAll('_', ' ')}.` : '; no flags.');
  const view: MarketBriefView = {
    marketId: r.marketId,
    protocol: r.protocol,
    chainId: r.chainId,
    summary,
    keyFigures: {
      supplyUsd: r.supplyUsd,
      borrowUsd: r.borrowUsd,
      utilization: r.utilization,
      supplyApy: m.supplyApy,
      borrowApy: m.borrowApy,
      availableLiquidityUsd: r.availableLiquidityUsd,
      lltv: r.lltv,
      borrowPositions: r.borrowPositions,
      liquidatablePositions: now.liquidatablePositions,
      debtLiquidatableUsd: now.debtAtRiskUsd,
      oracleStalenessRatio: r.oracleHealth?.stalenessRatio ?? null,
      top10BorrowerShare: fraction(r.concentration.top10Share),
    },
    flags,
    stress: [m10, m20].map((s) => ({
      collateralPriceChange: s.collateralPriceChange,
      newlyLiquidatable: s.newlyLiquidatable,
      debtAtRiskUsd: s.debtAtRiskUsd,
      badDebtUsd: s.badDebtUsd,
    })),
  };
  return {
    items: [view],
    itemProtocols: found.itemProtocols,
    scopeProtocols: found.scopeProtocols,
    ...(found.chains ? { chains: found.chains } : {}),
  };
}
