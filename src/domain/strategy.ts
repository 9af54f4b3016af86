/**
 * Strategy classification of a market from its collateral and loan symbols. Pure and total:
 * every pair of strings, however odd, gets one of {@link STRATEGY_TYPES}.
 *
 * Symbols are recognised by family, case-insensitively, with a bridged `.e` suffix ignored
 * (`USDC.e` is USDC). Families:
 * - `pt`: Pendle principal tokens, any symbol starting with `PT-` or `PT_` (checked first, so
 *   `PT-weETH-26DEC2024` is `pt`, not `eth`);
 * - `eth`: ETH, WETH and ETH-pegged liquid staking and restaking tokens (stETH, wstETH, rETH,
 *   cbETH, weETH, ezETH, rsETH, osETH, ETHx, ...): symbols ending in `eth` plus a known list;
 * - `btc`: BTC wrappers and staked BTC (WBTC, cbBTC, tBTC, LBTC, eBTC, BTC.b, BTCB, SolvBTC, ...):
 *   any symbol containing `btc`;
 * - `stable`: fiat-pegged stablecoins, USD and EUR (USDC, USDT, DAI, USDS, USDe, GHO, FRAX,
 *   crvUSD, PYUSD, USD0, EURC, ...), and also their yield-bearing wrappers (sDAI, sUSDS, sUSDe,
 *   sfrxUSD, scrvUSD, syrupUSDC, ...). Yield-bearing stables are counted as `stable` by
 *   {@link assetFamily}; the distinction only matters as collateral, where it selects
 *   `yield-bearing-stable` instead of `stablecoin-lending`;
 * - `other`: everything else (governance tokens, memecoins, unknown symbols, empty strings).
 */
import type { RiskLevel } from './enums.ts';
import type { StrategyInfo } from './types.ts';

/** Every strategy type, in the order of the catalogue. */
export const STRATEGY_TYPES = [
  'stablecoin-lending',
  'yield-bearing-stable',
  'eth-lst-loop',
  'btc-loop',
  'pendle-pt',
  'eth-collateral-stable-borrow',
  'btc-collateral-stable-borrow',
  'volatile-collateral',
  'volatile-pair',
] as const;
export type StrategyType = (typeof STRATEGY_TYPES)[number];

export type AssetFamily = 'stable' | 'eth' | 'btc' | 'pt' | 'other';

interface StrategyEntry {
  label: string;
  description: string;
  riskLevel: RiskLevel;
  color: string;
  icon: string;
}

/**
 * The catalogue. Risk is a property of the type, so it is the same for every market of a type:
 * loops of correlated assets (ETH against ETH, BTC against BTC) and PT collateral are medium
 * (depeg, rate and maturity risk), dollar against dollar is low, and anything whose collateral
 * is not pegged to the loan's unit and not a major (ETH, BTC) is high.
 * Colors are hex; icons are Lucide icon names.
 */
const CATALOGUE: Readonly<Record<StrategyType, StrategyEntry>> = Object.freeze({
  'stablecoin-lending': {
    label: 'Stablecoin lending',
    description:
      'A stablecoin borrowed against another stablecoin. Both sides hold the same peg, so the position is only at risk if one of them depegs.',
    riskLevel: 'low',
    color: '#22c55e',
    icon: 'shield',
  },
  'yield-bearing-stable': {
    label: 'Yield-bearing stable',
    description:
      'A stablecoin borrowed against a yield-bearing stablecoin, usually looped to earn the spread between the savings rate and the borrow rate. The collateral value only grows unless the wrapper or its underlying depegs.',
    riskLevel: 'low',
    color: '#10b981',
    icon: 'percent',
  },
  'eth-lst-loop': {
    label: 'ETH loop',
    description:
      'ETH borrowed against ETH or an ETH liquid staking or restaking token, typically looped to leverage the staking yield. Risk comes from the token trading below ETH and from borrow rates exceeding the staking yield.',
    riskLevel: 'medium',
    color: '#6366f1',
    icon: 'repeat',
  },
  'btc-loop': {
    label: 'BTC loop',
    description:
      'One BTC token borrowed against another, such as WBTC against cbBTC. Both track bitcoin, so the risk is a wrapper or staked BTC token losing its peg.',
    riskLevel: 'medium',
    color: '#f7931a',
    icon: 'bitcoin',
  },
  'pendle-pt': {
    label: 'Pendle PT',
    description:
      'A Pendle principal token used as collateral to lock in a fixed yield until maturity, often looped. PT prices move with implied rates before maturity and the underlying asset can depeg.',
    riskLevel: 'medium',
    color: '#14b8a6',
    icon: 'clock',
  },
  'eth-collateral-stable-borrow': {
    label: 'ETH-backed borrowing',
    description:
      'A stablecoin borrowed against ETH or an ETH staking token: a long ETH position or a loan without selling ETH. A fall in the ETH price moves the position towards liquidation.',
    riskLevel: 'medium',
    color: '#3b82f6',
    icon: 'gem',
  },
  'btc-collateral-stable-borrow': {
    label: 'BTC-backed borrowing',
    description:
      'A stablecoin borrowed against a BTC token: a long bitcoin position or a loan without selling BTC. A fall in the BTC price moves the position towards liquidation.',
    riskLevel: 'medium',
    color: '#f59e0b',
    icon: 'coins',
  },
  'volatile-collateral': {
    label: 'Volatile collateral',
    description:
      'A stablecoin borrowed against a volatile or lesser-known asset. Large price swings and thin liquidity can cause fast liquidations.',
    riskLevel: 'high',
    color: '#ef4444',
    icon: 'activity',
  },
  'volatile-pair': {
    label: 'Volatile pair',
    description:
      'Collateral and loan assets whose prices move independently of each other, such as a stablecoin against ETH or ETH against BTC. Either side moving can bring the position to liquidation.',
    riskLevel: 'high',
    color: '#dc2626',
    icon: 'shuffle',
  },
});

/** Dollar- or euro-pegged stablecoins that the generic rules below would miss or misread. */
const PLAIN_STABLES: ReadonlySet<string> = new Set([
  'dai',
  'gho',
  'frax',
  'mim',
  'dola',
  'bold',
  'xdai',
  'wxdai',
  'axlusdc',
  'axlusdt',
  'susd', // Synthetix sUSD: a stablecoin, not a savings wrapper.
  'usd₮0',
]);

/** Yield-bearing stables not caught by the prefix rule of {@link isYieldBearingStable}. */
const YIELD_STABLES: ReadonlySet<string> = new Set([
  'usd0++',
  'stkgho',
  'savusd',
  'sdola',
  'wusd+',
  'usyc',
  'ysusdc',
]);

/** Prefixes that wrap a plain stablecoin into a yield-bearing one (sDAI, stUSDT, wUSDM, syrupUSDC). */
const YIELD_PREFIXES = ['syrup', 'stk', 'st', 'ws', 's', 'w'] as const;

/** ETH-pegged tokens whose symbol does not end in `eth`. */
const ETH_EXTRA: ReadonlySet<string> = new Set(['ethx', 'eth+', 'weeths', 'superoethb', 'wsuperoethb']);

function normalize(symbol: string): string {
  const s = symbol.trim().toLowerCase();
  return s.endsWith('.e') ? s.slice(0, -2) : s;
}

function isPlainStable(s: string): boolean {
  if (PLAIN_STABLES.has(s)) return true;
  // USD-prefixed (USDC, USDT, USDS, USDe, USD0, USDT0, USDbC, ...), USD-suffixed (crvUSD, PYUSD,
  // frxUSD, LUSD, ...) and EUR-prefixed (EURC, EURe, EURS, ...) symbols are fiat stablecoins.
  return /^usd[a-z0-9]{0,3}$/.test(s) || /^[a-z]{1,5}usd$/.test(s) || /^eur[a-z]{0,3}$/.test(s);
}

function isYieldBearingStable(s: string): boolean {
  if (YIELD_STABLES.has(s)) return true;
  if (PLAIN_STABLES.has(s)) return false;
  for (const prefix of YIELD_PREFIXES) {
    if (s.length > prefix.length && s.startsWith(prefix) && isPlainStable(s.slice(prefix.length))) {
      return true;
    }
  }
  return false;
}

function familyOf(s: string): AssetFamily {
  if (isPendlePrincipalToken(s)) return 'pt';
  if (s.endsWith('eth') || ETH_EXTRA.has(s)) return 'eth';
  if (s.includes('btc')) return 'btc';
  if (isPlainStable(s) || isYieldBearingStable(s)) return 'stable';
  return 'other';
}

/**
 * Family of a token symbol (case-insensitive): `stable`, `eth`, `btc`, `pt` or `other`.
 * Yield-bearing stablecoins (sDAI, sUSDS, sUSDe, ...) count as `stable`.
 */
/**
 * Pendle principal tokens: `PT-sUSDE-27MAR2025` (Pendle, Morpho) or `PT_USDe_25SEP2025` (Aave).
 * Collateral only: no lending market lends them out.
 */
export function isPendlePrincipalToken(symbol: string): boolean {
  return /^pt[-_]/i.test(symbol);
}

export function assetFamily(symbol: string): AssetFamily {
  return familyOf(normalize(symbol));
}

function strategyType(collateralSymbol: string, loanSymbol: string): StrategyType {
  const collateral = normalize(collateralSymbol);
  const collateralFamily = familyOf(collateral);
  const loanFamily = familyOf(normalize(loanSymbol));
  if (collateralFamily === 'pt') return 'pendle-pt';
  if (loanFamily === 'stable') {
    switch (collateralFamily) {
      case 'stable':
        return isYieldBearingStable(collateral) ? 'yield-bearing-stable' : 'stablecoin-lending';
      case 'eth':
        return 'eth-collateral-stable-borrow';
      case 'btc':
        return 'btc-collateral-stable-borrow';
      default:
        return 'volatile-collateral';
    }
  }
  if (collateralFamily === 'eth' && loanFamily === 'eth') return 'eth-lst-loop';
  if (collateralFamily === 'btc' && loanFamily === 'btc') return 'btc-loop';
  return 'volatile-pair';
}

/**
 * Strategy of a market from its collateral and loan symbols. Rules, in order:
 * PT collateral → `pendle-pt`; stable loan → by collateral family (`stablecoin-lending` or
 * `yield-bearing-stable`, `eth-collateral-stable-borrow`, `btc-collateral-stable-borrow`,
 * otherwise `volatile-collateral`); ETH against ETH → `eth-lst-loop`; BTC against BTC →
 * `btc-loop`; anything else → `volatile-pair`. Returns a fresh object each call.
 */
export function classifyStrategy(collateralSymbol: string, loanSymbol: string): StrategyInfo {
  const type = strategyType(collateralSymbol, loanSymbol);
  return { type, ...CATALOGUE[type] };
}
