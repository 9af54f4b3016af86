import { Type } from '@fastify/type-provider-typebox';
import { ORACLE_PROVIDERS, ORACLE_TYPES, RISK_LEVELS } from '../../../domain/enums.ts';
import type { OracleRecord } from '../../../domain/types.ts';
import { envelope, NOT_MODIFIED, nullable, ProtocolSchema, ref, USD } from '../../schemas.ts';
import { OracleHealthSchema } from '../oracles/schemas.ts';

/** The markets area's schemas: a market (with its strategy and oracle) and its history. */

const ADDRESS_EXAMPLE = '0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0';

export const StrategyInfoSchema = Type.Object(
  {
    type: Type.String({ description: 'Strategy type, e.g. `eth-lst-loop`.' }),
    label: Type.String(),
    description: Type.String(),
    riskLevel: Type.Unsafe<(typeof RISK_LEVELS)[number]>({ type: 'string', enum: [...RISK_LEVELS] }),
    color: Type.String({ description: 'Hex color used for this strategy in dashboards.' }),
    icon: Type.String({ description: 'Icon name.' }),
  },
  { additionalProperties: false },
);

export const OracleFeedSchema = Type.Object({
  address: Type.String(),
  description: Type.String(),
  pair: Type.String({ examples: ['ETH/USD'] }),
});

const OracleInfoProperties = {
  address: Type.String(),
  type: Type.Unsafe<string>({ type: 'string', enum: [...ORACLE_TYPES] }),
  provider: Type.Unsafe<string>({ type: 'string', enum: [...ORACLE_PROVIDERS] }),
  feeds: Type.Array(OracleFeedSchema),
  isComposite: Type.Boolean({ description: 'True when the price is composed from several feeds.' }),
  warnings: Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: { type: 'string' } }),
};
export const OracleInfoSchema = Type.Unsafe<OracleRecord | null>({
  ...Type.Object(OracleInfoProperties),
  type: ['object', 'null'],
  description: 'Price oracle of the market; null when unknown.',
});

export const MarketSchema = Type.Object(
  {
    uniqueKey: Type.String({
      description: '`<protocol>-<chainId>-<identifier>`, lowercase.',
      examples: ['morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc'],
    }),
    protocol: ProtocolSchema,
    chainId: Type.Integer({ examples: [1] }),
    label: nullable<string>('string', 'Market label.', 'wstETH / WETH'),
    collateral: Type.String({ description: 'Collateral token symbol.', examples: ['wstETH'] }),
    loan: Type.String({ description: 'Loan token symbol.', examples: ['WETH'] }),
    collateralAddress: Type.String({ examples: [ADDRESS_EXAMPLE] }),
    loanAddress: Type.String(),
    collateralPrice: nullable<number>(
      'number',
      'USD; null when no source states one (never 0: a market without a USD price is still served, with what is known).',
    ),
    loanPrice: nullable<number>(
      'number',
      'USD; null when no source states one (then supply, borrow and available are null too).',
    ),
    supply: nullable<number>(
      'number',
      'Total supplied, USD; null without a loan price (supplyAssets holds the amount).',
    ),
    borrow: nullable<number>('number', 'Total borrowed, USD; null without a loan price.'),
    available: nullable<number>('number', 'supply - borrow, USD; null without a loan price.'),
    supplyAssets: nullable<number>(
      'number',
      'Total supplied in loan-token units: as the source read it, else supply / loanPrice; null when neither is known.',
    ),
    borrowAssets: nullable<number>('number', 'Total borrowed in loan-token units (as supplyAssets).'),
    utilization: Type.Number({
      description: 'borrow / supply, 0 to 1 (in loan-token units when there is no USD price).',
    }),
    supplyApy: Type.Number({ description: 'Decimal APY (0.042 = 4.2 %).' }),
    borrowApy: Type.Number({ description: 'Decimal APY.' }),
    supplyRewardsApy: Type.Number({ description: 'Additional rewards APY, decimal.' }),
    borrowRewardsApy: Type.Number({ description: 'Additional rewards APY, decimal.' }),
    rewardTokens: Type.Array(Type.String()),
    lltv: Type.Number({ description: 'Liquidation loan-to-value, 0 to 1.' }),
    maxLeverage: Type.Number({ description: '1 / (1 - lltv).' }),
    strategyType: Type.String(),
    strategyInfo: StrategyInfoSchema,
    vaultSymbol: nullable<string>('string', 'Vault token symbol (euler markets only).'),
    vaultAddress: nullable<string>(
      'string',
      'Vault contract address (Euler and Fluid markets; null on the others).',
    ),
    governor: nullable<string>('string', 'Governor or curator name (euler markets only).'),
    oracle: OracleInfoSchema,
    oracleHealth: OracleHealthSchema,
  },
  { additionalProperties: false },
);

export const MarketHistoryPointSchema = Type.Object(
  {
    at: Type.String({ description: 'ISO 8601 UTC: the hour, or the day (00:00), the point is of.' }),
    supply: USD('Total supplied'),
    borrow: USD('Total borrowed'),
    utilization: Type.Number({ description: 'borrow / supply, 0 to 1.' }),
    supplyApy: Type.Number({ description: 'Decimal APY.' }),
    borrowApy: Type.Number({ description: 'Decimal APY.' }),
    collateralPrice: nullable<number>('number', 'Collateral USD price.'),
    loanPrice: nullable<number>('number', 'Loan token USD price.'),
    oraclePrice: nullable<number>('number', "The market oracle's price of the collateral in loan units."),
  },
  {
    additionalProperties: false,
    examples: [
      {
        at: '2026-11-20T00:00:00.000Z',
        supply: 152340112.54,
        borrow: 131022000.1,
        utilization: 0.86006244,
        supplyApy: 0.0241,
        borrowApy: 0.0312,
        collateralPrice: 4102.3,
        loanPrice: 3398.7,
        oraclePrice: 1.2070204,
      },
    ],
  },
);

export const MarketRef = ref('Market', MarketSchema);
export const MarketHistoryPointRef = ref('MarketHistoryPoint', MarketHistoryPointSchema);

/** Responses of the market list routes (list, search). */
export const MARKET_LIST_RESPONSES = {
  200: envelope(Type.Array(MarketRef)),
  ...NOT_MODIFIED,
};
