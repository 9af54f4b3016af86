/**
 * Asset families, from a token's symbol alone: which unit a token is pegged to or tracks. The
 * sandbox prices tokens by family (src/ingest/sandbox/prices.ts), and the stress test moves
 * correlated tokens with their base (src/domain/stress.ts): both read this one table.
 */
import { isPendlePrincipalToken } from './strategy.ts';

export type AssetFamily =
  | 'usd'
  | 'usd-yield'
  | 'eur'
  | 'eth'
  | 'eth-lst'
  | 'btc'
  | 'gold'
  | 'pt'
  | 'major'
  | 'other';

/**
 * Well-known non-pegged tokens (chain natives and their wrappers, governance tokens): each is
 * its own family member, whatever its spelling (ETHFI is not an ETH staking token).
 */
export const MAJOR_SYMBOLS = [
  'BNB',
  'WBNB',
  'POL',
  'WPOL',
  'MATIC',
  'WMATIC',
  'AVAX',
  'WAVAX',
  'SAVAX',
  'S',
  'WS',
  'MNT',
  'WMNT',
  'XPL',
  'WXPL',
  'CELO',
  'METIS',
  'ONE',
  'RON',
  'WRON',
  'GNO',
  'LINK',
  'AAVE',
  'UNI',
  'COMP',
  'MKR',
  'SKY',
  'ARB',
  'OP',
  'MORPHO',
  'EUL',
  'FLUID',
  'CRV',
  'LDO',
  'SOL',
  'PENDLE',
  'ENA',
  'ETHFI',
  'AERO',
  'SNX',
  'BAL',
  'RPL',
  'SPK',
] as const;
export type MajorSymbol = (typeof MAJOR_SYMBOLS)[number];
const MAJORS: ReadonlySet<string> = new Set(MAJOR_SYMBOLS);

const PLAIN_STABLES = new Set([
  'DAI',
  'XDAI',
  'WXDAI',
  'GHO',
  'FRAX',
  'LUSD',
  'DOLA',
  'MIM',
  'BOLD',
  'USR',
  'USX',
  'MAI',
  'BUIDL',
]);

/** Lowercase prefixes of yield-bearing wrappers of a stable (sDAI, sUSDe, syrupUSDC, stcUSD...). */
const YIELD_PREFIX = /^(syrup|sfrx|wst|stc|sav|stk|ws|st|sy|sr|sd|s|y)(?=[A-Z])/;

function isStableSymbol(upper: string): boolean {
  return upper.includes('USD') || PLAIN_STABLES.has(upper);
}

/**
 * The family of a symbol, from its spelling alone, first rule that matches: Pendle PTs; LP
 * tokens (other); PAXG and XAUT (gold); the majors above; ETH and WETH (eth); anything else
 * spelled with ETH (eth-lst: LSTs and LRTs such as wstETH, weETH, rsETH); with BTC (btc: WBTC,
 * cbBTC, tBTC, LBTC...); with EUR (eur); a yield prefix on a stable (usd-yield); a stable
 * (usd); else other.
 */
export function assetFamily(symbol: string): AssetFamily {
  const upper = symbol.toUpperCase();
  if (isPendlePrincipalToken(symbol)) return 'pt';
  if (upper.startsWith('LP-')) return 'other';
  if (upper === 'PAXG' || upper === 'XAUT' || upper === 'XAUT0') return 'gold';
  if (MAJORS.has(upper)) return 'major';
  if (upper === 'ETH' || upper === 'WETH') return 'eth';
  if (upper.includes('ETH')) return 'eth-lst';
  if (upper.includes('BTC')) return 'btc';
  if (upper.includes('EUR')) return 'eur';
  const prefix = YIELD_PREFIX.exec(symbol);
  if (prefix && isStableSymbol(symbol.slice(prefix[0].length).toUpperCase())) return 'usd-yield';
  if (isStableSymbol(upper)) return 'usd';
  return 'other';
}

/** Tokens priced by another's feed: wrapped natives by the native, bridged copies by the original. */
const ALIASES: Readonly<Record<string, string>> = {
  WETH: 'ETH',
  'USDC.E': 'USDC',
  USDBC: 'USDC',
  WAVAX: 'AVAX',
  WBNB: 'BNB',
  WPOL: 'POL',
  WMATIC: 'MATIC',
  WXDAI: 'XDAI',
  'BTC.B': 'BTC',
  WXPL: 'XPL',
  WS: 'S',
  WMNT: 'MNT',
};

/** The symbol a feed would use for a token: upper case, wrapped natives as the native ("Real sources" (docs/decisions.md): WETH by ETH/USD). */
export function feedSymbol(symbol: string): string {
  const upper = symbol.toUpperCase();
  return ALIASES[upper] ?? upper;
}
