/**
 * The real reference data the sandbox is built on (reference/*.json, see reference/SOURCES.md).
 * Only the fields the generator reads are declared.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_REFERENCE_DIR = fileURLToPath(new URL('../../../reference/', import.meta.url));

export interface RefToken {
  chainId: number;
  address: string;
  symbol: string;
  name: string;
  decimals: number | null;
}

export interface RefChainlinkFeed {
  chainId: number;
  address: string;
  name: string;
  pair: string | null;
  baseAsset: string | null;
  quoteAsset: string | null;
  heartbeatSeconds: number | null;
  /** Percent (0.5 = 0.5 %); null when not published. */
  deviationPercent?: number | null;
  productSubType?: string | null;
  shutdownDate?: string;
}

export interface RefMorphoOracleFeed {
  chainId: number;
  address: string;
  vendor: string;
  description: string;
  pair: string | null;
  baseAsset: string | null;
  quoteAsset: string | null;
  tokenIn?: string;
}

export interface RefMorphoMarket {
  uniqueKey: string;
  chainId: number;
  loanToken: string;
  loanSymbol: string;
  collateralToken: string;
  collateralSymbol: string;
  oracle: string;
  lltv: number;
}

export interface RefAaveEMode {
  id: number;
  label: string;
  liquidationThreshold: number;
  /** Fraction over the repaid debt inside the e-mode; absent when not given. */
  liquidationBonus?: number;
  collateralAssets: string[];
  borrowableAssets: string[];
}

export interface RefAaveMarket {
  market: string;
  chainId: number;
  pool: string;
  oracle: string;
  eModes: RefAaveEMode[];
}

export interface RefAaveReserve {
  market: string;
  chainId: number;
  pool: string;
  symbol: string;
  underlying: string;
  oracle: string;
  risk?: {
    liquidationThreshold: number;
    /** Fraction over the repaid debt (0.05 = 5 %); 0 or absent when not given. */
    liquidationBonus?: number;
    reserveFactor: number;
    borrowingEnabled: boolean;
    usageAsCollateralEnabled: boolean;
    isActive: boolean;
    isFrozen: boolean;
    oracleDescription: string | null;
  };
}

export interface RefSparkReserve {
  chainId: number;
  pool: string;
  symbol: string;
  underlying: string;
}

export interface RefSpark {
  market: { market: string; chainId: number; pool: string; oracle: string };
  reserves: RefSparkReserve[];
}

export interface RefComet {
  chainId: number;
  comet: string;
  /** Its CometRewards contract, when it has one. */
  rewards?: string | null;
  name: string;
  baseSymbol: string;
  baseToken: string;
  baseTokenPriceFeed: string | null;
  rates: {
    borrowKink: number;
    borrowSlopeLow: number;
    borrowSlopeHigh: number;
    borrowBase: number;
  };
  collaterals: {
    symbol: string;
    address: string;
    priceFeed: string | null;
    liquidateCollateralFactor: number | null;
    /** Share of the collateral's value credited when it is absorbed (0.93: a 7 % penalty). */
    liquidationFactor?: number | null;
  }[];
}

export interface RefMorphoVault {
  chainId: number;
  address: string;
  name: string;
  symbol: string;
  asset: string;
  assetSymbol: string;
}

export interface RefEulerVault {
  chainId: number;
  address: string;
  name: string | null;
  product: string;
  governor: string;
  governorEntities: string[];
  status: 'active' | 'deprecated';
  asset: string | null;
}

export interface RefEulerGovernor {
  chainId: number;
  entityId: string;
  name: string;
}

export interface RefFluidVault {
  chainId: number;
  deploymentName: string;
  address: string;
  vaultId: number;
  vaultType: string;
  supplyToken: string | { token0: string; token1: string };
  borrowToken: string | { token0: string; token1: string };
}

export interface ReferenceData {
  tokens: RefToken[];
  chainlinkFeeds: RefChainlinkFeed[];
  morphoOracleFeeds: RefMorphoOracleFeed[];
  morphoMarkets: RefMorphoMarket[];
  morphoVaults: RefMorphoVault[];
  aaveMarkets: RefAaveMarket[];
  aaveReserves: RefAaveReserve[];
  spark: RefSpark;
  comets: RefComet[];
  eulerVaults: RefEulerVault[];
  eulerGovernors: RefEulerGovernor[];
  fluidVaults: RefFluidVault[];
}

/** File names read from the reference folder (all of them are copied there as data). */
const REFERENCE_FILES = {
  tokens: 'tokens.json',
  chainlinkFeeds: 'chainlink-feeds.json',
  morphoOracleFeeds: 'morpho-oracle-feeds.json',
  morphoMarkets: 'morpho-markets.json',
  morphoVaults: 'morpho-vaults.json',
  aaveMarkets: 'aave-v3-markets.json',
  aaveReserves: 'aave-v3-reserves.json',
  spark: 'sparklend-reserves.json',
  comets: 'compound-v3-comets.json',
  eulerVaults: 'euler-vaults.json',
  eulerGovernors: 'euler-governors.json',
  fluidVaults: 'fluid-vaults.json',
} as const satisfies Record<keyof ReferenceData, string>;

const cache = new Map<string, ReferenceData>();

/** Reads (once per folder and process) the reference files. Throws if one is missing or not JSON. */
export function loadReference(dir: string = DEFAULT_REFERENCE_DIR): ReferenceData {
  const cached = cache.get(dir);
  if (cached) return cached;
  const read = (file: string): unknown => JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const data: ReferenceData = {
    tokens: read(REFERENCE_FILES.tokens) as RefToken[],
    chainlinkFeeds: read(REFERENCE_FILES.chainlinkFeeds) as RefChainlinkFeed[],
    morphoOracleFeeds: read(REFERENCE_FILES.morphoOracleFeeds) as RefMorphoOracleFeed[],
    morphoMarkets: read(REFERENCE_FILES.morphoMarkets) as RefMorphoMarket[],
    morphoVaults: read(REFERENCE_FILES.morphoVaults) as RefMorphoVault[],
    aaveMarkets: read(REFERENCE_FILES.aaveMarkets) as RefAaveMarket[],
    aaveReserves: read(REFERENCE_FILES.aaveReserves) as RefAaveReserve[],
    spark: read(REFERENCE_FILES.spark) as RefSpark,
    comets: read(REFERENCE_FILES.comets) as RefComet[],
    eulerVaults: read(REFERENCE_FILES.eulerVaults) as RefEulerVault[],
    eulerGovernors: read(REFERENCE_FILES.eulerGovernors) as RefEulerGovernor[],
    fluidVaults: read(REFERENCE_FILES.fluidVaults) as RefFluidVault[],
  };
  cache.set(dir, data);
  return data;
}
