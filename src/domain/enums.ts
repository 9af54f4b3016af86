/**
 * Closed enumerations of the API (docs/decisions.md "Enumerations"), in their documented order.
 * The order matters: OpenAPI lists them as given and tests compare against it.
 */

export const PROTOCOLS = ['morpho', 'aave', 'spark', 'compound', 'euler', 'fluid'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const ORACLE_TYPES = [
  'ChainlinkOracle',
  'ChainlinkOracleV2',
  'RedstoneOracle',
  'PythOracle',
  'ChronicleOracle',
  'Api3Oracle',
  'PendlePtOracle',
  'ExchangeRateOracle',
  'Custom',
] as const;
export type OracleType = (typeof ORACLE_TYPES)[number];

export const ORACLE_PROVIDERS = [
  'Chainlink',
  'Redstone',
  'Pyth',
  'Chronicle',
  'API3',
  'Pendle',
  'Uniswap',
  'Unknown',
] as const;
export type OracleProvider = (typeof ORACLE_PROVIDERS)[number];

export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** EVM chains the service knows by name. Chain ids outside this table are still valid integers. */
export const CHAINS: Readonly<Record<number, string>> = Object.freeze({
  1: 'Ethereum',
  10: 'Optimism',
  56: 'BNB Chain',
  100: 'Gnosis',
  130: 'Unichain',
  137: 'Polygon',
  146: 'Sonic',
  5000: 'Mantle',
  8453: 'Base',
  9745: 'Plasma',
  42161: 'Arbitrum',
  43114: 'Avalanche',
  59144: 'Linea',
  534352: 'Scroll',
});

export function isProtocol(value: string): value is Protocol {
  return (PROTOCOLS as readonly string[]).includes(value);
}
