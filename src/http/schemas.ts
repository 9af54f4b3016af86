import { Type } from '@fastify/type-provider-typebox';
import { ORACLE_PROVIDERS, ORACLE_TYPES, PROTOCOLS, RISK_LEVELS } from '../domain/enums.ts';
import type { OracleHealth, OracleRecord } from '../domain/types.ts';
import { ERROR_STATUS, type ErrorCode } from './errors.ts';
import {
  MarketRatingSchema,
  RatingChangeSchema,
  RatingMethodologySchema,
  VaultRatingSchema,
} from './rating-schemas.ts';
import { ResearchReportSchema, ResearchReportSummarySchema } from './research-schemas.ts';
import { AUTHENTICATED_ERRORS } from './routes/types.ts';

/**
 * Response and parameter schemas. One schema feeds request validation, response
 * serialization (fast-json-stringify) and the OpenAPI document. Nullable primitives use
 * `type: [T, 'null']` rather than anyOf so the serializer stays on its fast path.
 */

type Primitive = 'string' | 'number' | 'integer' | 'boolean';
function nullable<T>(type: Primitive, description: string, example?: unknown) {
  return Type.Unsafe<T | null>({
    type: [type, 'null'],
    description,
    ...(example !== undefined ? { examples: [example] } : {}),
  });
}

const ADDRESS_EXAMPLE = '0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0';

export const ProtocolSchema = Type.Unsafe<(typeof PROTOCOLS)[number]>({
  type: 'string',
  enum: [...PROTOCOLS],
  description: 'Lending protocol identifier.',
});

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

const OracleHealthProperties = {
  lastUpdateTimestamp: Type.Integer({
    description: 'Unix seconds of the last update (of the stalest feed).',
  }),
  secondsSinceUpdate: Type.Integer({ description: 'now - lastUpdateTimestamp, seconds.' }),
  expectedHeartbeatSeconds: Type.Integer({
    description: 'Maximum interval the feed promises between updates.',
  }),
  isStale: Type.Boolean({ description: 'stalenessRatio > 1.' }),
  stalenessRatio: Type.Number({ description: 'secondsSinceUpdate / expectedHeartbeatSeconds.' }),
};

export const OracleInfoSchema = Type.Unsafe<OracleRecord | null>({
  ...Type.Object(OracleInfoProperties),
  type: ['object', 'null'],
  description: 'Price oracle of the market; null when unknown.',
});

export const OracleHealthSchema = Type.Unsafe<OracleHealth | null>({
  ...Type.Object(OracleHealthProperties),
  type: ['object', 'null'],
  description: 'Oracle freshness (the stalest feed of a composite oracle); null without oracle data.',
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

export const PositionAtRiskSchema = Type.Object({
  protocol: ProtocolSchema,
  chainId: Type.Integer(),
  user: Type.Object({
    address: Type.String({
      description: 'Wallet address of the position owner (for Euler, the EVC sub-account).',
    }),
  }),
  healthFactor: Type.Number({
    description:
      "collateralUsd x lltv / borrowAssetsUsd; below 1 = liquidatable. For Aave, Spark (per pool), Compound (per comet) and Euler (per controller vault) the account's: sum(collateralUsd x lltv) / sum(borrowAssetsUsd) over the wallet's positions in that pool, the same on each of them.",
  }),
  state: Type.Object({
    collateralUsd: Type.Number(),
    borrowAssetsUsd: Type.Number(),
    supplyAssetsUsd: Type.Number(),
  }),
  market: Type.Object({
    uniqueKey: Type.String(),
    collateralAsset: Type.Object({ symbol: Type.String() }),
    loanAsset: Type.Object({ symbol: Type.String() }),
    lltv: Type.Number(),
  }),
  leverage: nullable<number>(
    'number',
    "collateralUsd / (collateralUsd - borrowAssetsUsd), of the account's totals for pooled protocols; null when collateral does not exceed debt.",
  ),
  distanceToLiq: Type.Number({
    description:
      "1 - 1 / healthFactor: fraction the collateral price (all of an account's collateral) can fall before liquidation; <= 0 = liquidatable.",
  }),
});

const ADDRESS = Type.String({ pattern: '^0x[0-9a-f]{40}$', description: 'Lower-case 0x address.' });
const USD = (description: string) => Type.Number({ description: `${description}, USD (to the cent).` });
/** A USD amount some market may not have (no USD price of its loan token, D15): null, never 0. */
const UsdOrNull = (description: string, whenNull: string) =>
  nullable<number>(
    'number',
    `${description}, USD (to the cent); null when ${whenNull} has no USD price (never 0: the amount is unknown, not nothing).`,
  );

/** A price feed with its promises and its freshness now (DECISIONS D14). */
export const FeedStatusSchema = Type.Object(
  {
    address: ADDRESS,
    description: Type.String(),
    pair: Type.String({ examples: ['ETH/USD'] }),
    heartbeatSeconds: Type.Integer({ description: 'Maximum interval the feed promises between updates.' }),
    deviationThreshold: nullable<number>(
      'number',
      'Price move that makes the feed update before its heartbeat, as a fraction (0.005 = 0.5 %); null when unknown.',
      0.005,
    ),
    lastUpdateTimestamp: Type.Integer({ description: 'Unix seconds of its last update.' }),
    secondsSinceUpdate: Type.Integer({ description: 'now - lastUpdateTimestamp.' }),
    isStale: Type.Boolean({ description: 'stalenessRatio > 1.' }),
    stalenessRatio: Type.Number({ description: 'secondsSinceUpdate / heartbeatSeconds.' }),
  },
  { additionalProperties: false },
);

const PriceSourceSchema = Type.Unsafe<{
  kind: 'feed' | 'oracle' | 'api';
  address: string | null;
  description: string;
} | null>({
  type: ['object', 'null'],
  properties: {
    kind: {
      type: 'string',
      enum: ['feed', 'oracle', 'api'],
      description:
        "'feed': a Chainlink feed of the sources file; 'oracle': the market's own oracle; 'api': an API's price (the Morpho API's priceUsd).",
    },
    address: {
      type: ['string', 'null'],
      description: "The feed's or the oracle's address; null for an API.",
    },
    description: {
      type: 'string',
      description:
        "The feed's description (`X / ETH × ETH / USD` through ETH), the oracle's type and provider, or the API's field.",
    },
  },
  required: ['kind', 'address', 'description'],
  additionalProperties: false,
  description:
    "Where priceUsd comes from: the price source of the market priceUsd is taken from, as the data's source recorded it. Data that records none (the sandbox): the USD-quoted feed of the token (or of the asset it wraps) on its chain, else the oracle of its largest collateral market. null when none is known.",
});

const TokenProperties = {
  chainId: Type.Integer({ examples: [1] }),
  address: ADDRESS,
  symbol: Type.String({ examples: ['WETH'] }),
  name: Type.String({ examples: ['Wrapped Ether'] }),
  decimals: nullable<number>('integer', 'ERC-20 decimals; null when unknown.', 18),
  priceUsd: nullable<number>(
    'number',
    'USD price in the largest market (by supply) that holds the token, 8 significant digits; null when unknown.',
  ),
  priceSource: PriceSourceSchema,
  collateralMarkets: Type.Integer({ description: 'Markets that take it as collateral.' }),
  loanMarkets: Type.Integer({ description: 'Markets that lend it.' }),
  supplyUsd: UsdOrNull('Supplied over the markets that lend it', 'one of them'),
  borrowUsd: UsdOrNull('Borrowed over the markets that lend it', 'one of them'),
};

export const TokenSchema = Type.Object(TokenProperties, {
  additionalProperties: false,
  examples: [
    {
      chainId: 1,
      address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
      symbol: 'WETH',
      name: 'Wrapped Ether',
      decimals: 18,
      priceUsd: 3398.7,
      priceSource: {
        kind: 'feed',
        address: '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419',
        description: 'ETH / USD',
      },
      collateralMarkets: 84,
      loanMarkets: 145,
      supplyUsd: 6754352740.57,
      borrowUsd: 3701120326.91,
    },
  ],
});

export const TokenDetailSchema = Type.Object(
  {
    ...TokenProperties,
    feeds: Type.Array(FeedStatusSchema, {
      description: 'Feeds on its chain that price it (USD-quoted first).',
    }),
    markets: Type.Array(
      Type.Object(
        {
          uniqueKey: Type.String(),
          protocol: ProtocolSchema,
          role: Type.Unsafe<'collateral' | 'loan'>({ type: 'string', enum: ['collateral', 'loan'] }),
          supply: UsdOrNull('Market supply', 'the market'),
          borrow: UsdOrNull('Market borrow', 'the market'),
        },
        { additionalProperties: false },
      ),
      { description: 'Every market holding it, largest supply first (those without one last).' },
    ),
  },
  { additionalProperties: false },
);

const OracleProperties = {
  chainId: Type.Integer({ examples: [1] }),
  address: ADDRESS,
  type: Type.Unsafe<(typeof ORACLE_TYPES)[number]>({ type: 'string', enum: [...ORACLE_TYPES] }),
  provider: Type.Unsafe<(typeof ORACLE_PROVIDERS)[number]>({ type: 'string', enum: [...ORACLE_PROVIDERS] }),
  isComposite: Type.Boolean({ description: 'True when the price is composed from several feeds.' }),
  warnings: Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: { type: 'string' } }),
  health: OracleHealthSchema,
  feeds: Type.Array(FeedStatusSchema),
  marketCount: Type.Integer({ description: 'Markets priced by the oracle.' }),
  supplyAtStakeUsd: UsdOrNull('Supply of the markets it prices', 'one of them'),
  borrowAtStakeUsd: UsdOrNull('Borrow of the markets it prices', 'one of them'),
};

export const OracleSchema = Type.Object(OracleProperties, { additionalProperties: false });

export const OracleDetailSchema = Type.Object(
  {
    ...OracleProperties,
    markets: Type.Array(
      Type.Object(
        {
          uniqueKey: Type.String(),
          protocol: ProtocolSchema,
          collateral: Type.String(),
          loan: Type.String(),
          supply: UsdOrNull('Market supply', 'the market'),
          borrow: UsdOrNull('Market borrow', 'the market'),
        },
        { additionalProperties: false },
      ),
      { description: 'The markets it prices, largest supply first (those without one last).' },
    ),
  },
  { additionalProperties: false },
);

export const OracleRoundSchema = Type.Object(
  {
    feed: ADDRESS,
    roundId: Type.String({ description: 'uint80 round id, decimal.' }),
    answer: Type.Number({
      description: "The price the round published, in the feed's quote (8 significant digits).",
    }),
    updatedAt: Type.Integer({ description: 'Unix seconds.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        feed: '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419',
        roundId: '110680464442257320247',
        answer: 3412.5,
        updatedAt: 1795576800,
      },
    ],
  },
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

export const LiquidationSchema = Type.Object(
  {
    protocol: ProtocolSchema,
    chainId: Type.Integer(),
    txHash: Type.String({ description: 'Lower-case transaction hash.' }),
    logIndex: Type.Integer(),
    block: Type.Integer(),
    timestamp: Type.String({ description: 'ISO 8601 UTC time of the block.' }),
    marketId: Type.String({ description: 'Market uniqueKey.' }),
    collateral: nullable<string>(
      'string',
      'Collateral symbol; null when the market is not in the current data.',
    ),
    loan: nullable<string>('string', 'Loan symbol; null when the market is not in the current data.'),
    borrower: ADDRESS,
    liquidator: ADDRESS,
    collateralSeized: Type.Number({ description: 'Collateral seized, token units.' }),
    collateralSeizedUsd: UsdOrNull(
      "Collateral seized, at the prices of the liquidation's block where they could be read, else its market's",
      'the collateral',
    ),
    debtRepaid: Type.Number({ description: 'Debt repaid, token units.' }),
    debtRepaidUsd: UsdOrNull('Debt repaid', 'the loan token'),
    badDebt: Type.Number({ description: 'Debt left unbacked by collateral, token units.' }),
    badDebtUsd: UsdOrNull('Bad debt (0 when there is none, priced or not)', 'the loan token'),
  },
  {
    additionalProperties: false,
    examples: [
      {
        protocol: 'morpho',
        chainId: 1,
        txHash: '0x3a5a447df75a969152a14ae5c3b7d8bcc076f50a0b1f34529229e2850066a355',
        logIndex: 337,
        block: 23780246,
        timestamp: '2026-11-20T14:03:11.000Z',
        marketId: 'morpho-1-0xb8fc70e82bc5bb53e773626fcc6a23f7eefa036918d7ef216ecfb1950a94a85e',
        collateral: 'wstETH',
        loan: 'WETH',
        borrower: '0x9f8c2c68d3e470e05737a1fe487b8997f4344a06',
        liquidator: '0xe5d40dfabe294c0d79ea1e0ecd8060f2236ff521',
        collateralSeized: 12.41,
        collateralSeizedUsd: 50912.33,
        debtRepaid: 14.2,
        debtRepaidUsd: 48262.1,
        badDebt: 0,
        badDebtUsd: 0,
      },
    ],
  },
);

const NullableNumber = (description: string) => nullable<number>('number', description);

export const PositionSchema = Type.Object(
  {
    protocol: ProtocolSchema,
    chainId: Type.Integer(),
    user: Type.Object({ address: ADDRESS }, { additionalProperties: false }),
    healthFactor: NullableNumber(
      "collateralUsd x lltv / borrowAssetsUsd; below 1 = liquidatable; for pooled protocols the account's (sum(collateralUsd x lltv) / sum(borrowAssetsUsd) of the wallet's positions in the pool, comet or Euler controller vault), shown on each of its positions, debt-free ones too; null when the position (for pooled protocols, its account) has no debt.",
    ),
    state: Type.Object(
      {
        collateralUsd: Type.Number(),
        borrowAssetsUsd: Type.Number(),
        supplyAssetsUsd: Type.Number(),
      },
      { additionalProperties: false },
    ),
    market: Type.Object(
      {
        uniqueKey: Type.String(),
        collateralAsset: Type.Object({ symbol: Type.String() }, { additionalProperties: false }),
        loanAsset: Type.Object({ symbol: Type.String() }, { additionalProperties: false }),
        lltv: Type.Number(),
      },
      { additionalProperties: false },
    ),
    leverage: NullableNumber(
      "collateralUsd / (collateralUsd - borrowAssetsUsd), of the account's totals for pooled protocols; null when collateral does not exceed debt.",
    ),
    distanceToLiq: NullableNumber('1 - 1 / healthFactor; null without debt.'),
    collateralPrice: Type.Number({ description: 'The collateral USD price now.' }),
    liquidationPrice: NullableNumber(
      'The USD price of the token named by `liquidationPriceToken` at which the health factor (for pooled protocols the ' +
        "account's) reaches 1, every other price fixed: by default the position's collateral token (collateralPrice / " +
        "healthFactor for an isolated position); with `asset`, that asset's price (its debt: the price whose rise liquidates); " +
        'null without debt, when the position does not hold the asset, or when no price of it liquidates the account (its ' +
        'other collateral covers the debt).',
    ),
    liquidationPriceToken: Type.Union(
      [
        Type.Object({ address: ADDRESS, symbol: Type.String() }, { additionalProperties: false }),
        Type.Null(),
      ],
      {
        description: 'The token whose USD price `liquidationPrice` is; null when `liquidationPrice` is null.',
      },
    ),
  },
  { additionalProperties: false },
);

const TotalsProperties = {
  collateralUsd: USD('Collateral'),
  debtUsd: USD('Debt'),
  supplyUsd: USD('Supplied (lent)'),
  netUsd: USD('collateral + supplied - debt'),
  positions: Type.Integer(),
  weakestHealthFactor: NullableNumber(
    'Lowest health factor of the positions with debt; null when none has debt.',
  ),
};

export const PortfolioSchema = Type.Object(
  {
    address: ADDRESS,
    totals: Type.Object(TotalsProperties, { additionalProperties: false }),
    weakestPosition: nullable<string>('string', 'uniqueKey of the market of the weakest position.'),
    byProtocol: Type.Array(
      Type.Object({ protocol: ProtocolSchema, ...TotalsProperties }, { additionalProperties: false }),
    ),
    byChain: Type.Array(
      Type.Object({ chainId: Type.Integer(), ...TotalsProperties }, { additionalProperties: false }),
    ),
    positions: Type.Array(PositionSchema, {
      description: 'Weakest (lowest health factor) first; debt-free last.',
    }),
    liquidationMoves: Type.Array(
      Type.Object(
        {
          chainId: Type.Integer(),
          token: ADDRESS,
          symbol: Type.String(),
          side: Type.Unsafe<'collateral' | 'debt'>({ type: 'string', enum: ['collateral', 'debt'] }),
          exposureUsd: USD('Value held of it on that side'),
          priceUsd: Type.Number(),
          move: Type.Number({
            description:
              'Relative price move, all other prices fixed, that brings the first position (for pooled protocols, its account, every position of the account in the token moving) to health factor 1: a fall for collateral (<= 0), a rise for debt (>= 0); 0 when one is liquidatable already.',
          }),
          priceAtLiquidation: Type.Number({ description: 'priceUsd x (1 + move).' }),
          marketId: Type.String({ description: 'The market of the position it liquidates first.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Per asset backing or owed by a borrow position, closest to liquidation first.' },
    ),
  },
  { additionalProperties: false },
);

const ScenarioProperties = {
  liquidatablePositions: Type.Integer({
    description: 'Positions liquidatable after the move (those liquidatable before included).',
  }),
  newlyLiquidatable: Type.Integer({ description: 'Positions the move makes liquidatable.' }),
  debtAtRiskUsd: USD('Debt of the positions liquidatable after the move, valued after it'),
  collateralSeizedUsd: USD(
    'Collateral liquidators would seize, liquidating them in full at the liquidation bonus',
  ),
  debtRepaidUsd: USD('Debt liquidators would repay'),
  badDebtUsd: USD('Debt their collateral would not cover (debt - collateral / (1 + bonus), where positive)'),
};

const ConcentrationSchema = Type.Object(
  {
    borrowers: Type.Integer({ description: 'Borrowers with debt.' }),
    top10Share: Type.Number({ description: "The 10 largest borrowers' share of the debt, 0 to 1." }),
    herfindahl: Type.Number({
      description:
        "Herfindahl-Hirschman index of the debt: the sum of each borrower's squared share (1 / n for n equal borrowers, 1 for one).",
    }),
  },
  { additionalProperties: false },
);

export const MarketRiskSchema = Type.Object(
  {
    marketId: Type.String(),
    protocol: ProtocolSchema,
    chainId: Type.Integer(),
    collateralAsset: Type.Object(
      { symbol: Type.String(), priceUsd: nullable<number>('number', 'USD; null when unknown.') },
      { additionalProperties: false },
    ),
    loanAsset: Type.Object(
      { symbol: Type.String(), priceUsd: nullable<number>('number', 'USD; null when unknown.') },
      { additionalProperties: false },
    ),
    lltv: Type.Number(),
    liquidationBonus: Type.Number({
      description:
        "Paid to liquidators over the debt they repay (0.05 = 5 %): Morpho's min(1.15, 1 / (0.3 x lltv + 0.7)) - 1, 5 % for the pooled protocols.",
    }),
    supplyUsd: nullable<number>('number', 'Supplied, USD; null without a loan price.'),
    borrowUsd: nullable<number>('number', 'Borrowed, USD; null without a loan price.'),
    availableLiquidityUsd: nullable<number>(
      'number',
      'Loan assets available (supply - borrow, at least 0), USD; null without a loan price.',
    ),
    utilization: Type.Number(),
    borrowPositions: Type.Integer({ description: 'Positions with debt.' }),
    collateralUsd: USD('Collateral of the positions with debt'),
    debtUsd: USD('Debt of the positions'),
    liquidatableNow: Type.Object(ScenarioProperties, {
      additionalProperties: false,
      description: 'Positions liquidatable at current prices, and what liquidating them would do.',
    }),
    scenarios: Type.Array(
      Type.Object(
        {
          collateralPriceChange: Type.Number({
            description: 'The collateral USD price move (-0.1 = a 10 % fall), the loan price fixed.',
          }),
          ...ScenarioProperties,
          liquidityCoverage: NullableNumber(
            'availableLiquidityUsd / debtRepaidUsd: above 1, the market holds the loan assets the liquidations would repay; null when none would.',
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'Collateral price falls of 5, 10, 20 and 30 %.' },
    ),
    concentration: ConcentrationSchema,
    oracleHealth: OracleHealthSchema,
  },
  { additionalProperties: false },
);

const StressFiguresProperties = {
  ...ScenarioProperties,
  newDebtAtRiskUsd: USD('Debt of the newly liquidatable positions, valued after the moves'),
};

const MovedAsset = Type.Object(
  {
    symbol: Type.String(),
    change: Type.Number({ description: 'The relative price move applied (0: unmoved).' }),
    via: nullable<string>(
      'string',
      'The shock it follows: its own symbol, or its base (WETH for wstETH); null when unmoved.',
    ),
  },
  { additionalProperties: false },
);

export const StressSchema = Type.Object(
  {
    shocks: Type.Array(
      Type.Object({ asset: Type.String(), change: Type.Number() }, { additionalProperties: false }),
      { description: 'The shocks as given.' },
    ),
    totals: Type.Object(
      {
        markets: Type.Integer({ description: 'Markets in scope whose collateral or loan asset moves.' }),
        ...StressFiguresProperties,
      },
      { additionalProperties: false },
    ),
    markets: Type.Array(
      Type.Object(
        {
          marketId: Type.String(),
          protocol: ProtocolSchema,
          chainId: Type.Integer(),
          collateralAsset: MovedAsset,
          loanAsset: MovedAsset,
          healthFactorScale: Type.Number({
            description:
              "(1 + collateral move) / (1 + loan move): the market's health factors are multiplied by it.",
          }),
          ...StressFiguresProperties,
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Moved markets with positions liquidatable after the moves, by debt at risk (largest first); `limit` of them.',
      },
    ),
  },
  { additionalProperties: false },
);

const AnalyticsTotalsProperties = {
  markets: Type.Integer(),
  unpricedMarkets: Type.Integer({
    description:
      'Markets counted whose loan token has no USD price: their supply and borrow are not in supplyUsd and borrowUsd.',
  }),
  supplyUsd: USD('Supplied'),
  borrowUsd: USD('Borrowed'),
  utilization: Type.Number({ description: 'borrowUsd / supplyUsd (0 when nothing is supplied).' }),
  positions: Type.Integer({ description: 'Positions held, debt-free ones included.' }),
  borrowPositions: Type.Integer({ description: 'Positions with debt.' }),
  positionsAtRisk: Type.Integer({
    description: 'Positions with a health factor below atRiskHealthFactor (liquidatable ones included).',
  }),
  liquidatablePositions: Type.Integer({ description: 'Positions with a health factor below 1.' }),
  debtAtRiskUsd: USD('Debt of the positions at risk'),
};

export const OverviewSchema = Type.Object(
  {
    atRiskHealthFactor: Type.Number({
      description: 'The health factor below which a position counts as at risk (1.1).',
    }),
    totals: Type.Object(AnalyticsTotalsProperties, { additionalProperties: false }),
    byProtocol: Type.Array(
      Type.Object(
        { protocol: ProtocolSchema, ...AnalyticsTotalsProperties },
        { additionalProperties: false },
      ),
      {
        description: 'Largest supply first.',
      },
    ),
    byChain: Type.Array(
      Type.Object({ chainId: Type.Integer(), ...AnalyticsTotalsProperties }, { additionalProperties: false }),
      {
        description: 'Largest supply first.',
      },
    ),
  },
  { additionalProperties: false },
);

export const TimeseriesPointSchema = Type.Object(
  {
    date: Type.String({ format: 'date', description: 'The UTC day.' }),
    protocol: nullable<string>(
      'string',
      'The protocol of the point (groupBy=protocol); null when grouped by chain.',
    ),
    chainId: nullable<number>(
      'integer',
      'The chain of the point (groupBy=chain); null when grouped by protocol.',
    ),
    markets: Type.Integer({ description: 'Markets with a daily snapshot that day.' }),
    supplyUsd: USD("Sum of the markets' supply in their daily snapshots"),
    borrowUsd: USD("Sum of the markets' borrow"),
    utilization: Type.Number({ description: 'borrowUsd / supplyUsd.' }),
    liquidations: Type.Integer({ description: 'Liquidations that day.' }),
    unpricedLiquidations: Type.Integer({
      description:
        'Liquidations that day with an amount of no known USD value (its token had no USD price): counted in liquidations, that amount left out of the USD sums.',
    }),
    liquidatedDebtUsd: USD('Debt they repaid (the known USD values)'),
    collateralSeizedUsd: USD('Collateral they seized (the known USD values)'),
    badDebtUsd: USD('Bad debt they left (the known USD values)'),
  },
  { additionalProperties: false },
);

const FlagProperties = {
  code: Type.String({
    description:
      "What is flagged. A wallet's positions: LIQUIDATABLE (health factor below 1), NEAR_LIQUIDATION (below 1.1), " +
      'BELOW_TARGET (below the target health factor asked), STALE_ORACLE (its market oracle is past its heartbeat). ' +
      'A market: LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION (95 % or more), STALE_ORACLE, NO_ORACLE, ' +
      'CONCENTRATED_BORROWERS (Herfindahl index of borrowers 0.25 or more), BAD_DEBT_UNDER_STRESS (a 20 % collateral ' +
      "fall leaves bad debt), THIN_LIQUIDITY (a 10 % fall's liquidations would repay more than the market holds), " +
      'NO_USD_PRICE (a token without a USD price). `reason` says why, with the figures.',
  }),
  severity: Type.Unsafe<'critical' | 'warning' | 'info'>({
    type: 'string',
    enum: ['critical', 'warning', 'info'],
  }),
  reason: Type.String({ description: 'Why, in plain language, with the figures it was decided on.' }),
};

export const WalletRiskSchema = Type.Object(
  {
    address: ADDRESS,
    riskLevel: Type.Unsafe<'none' | 'low' | 'medium' | 'high' | 'critical'>({
      type: 'string',
      enum: ['none', 'low', 'medium', 'high', 'critical'],
      description:
        'From the weakest health factor: critical < 1, high < 1.1, medium < 1.25, low otherwise; none without debt.',
    }),
    weakestHealthFactor: NullableNumber(
      'Lowest health factor of the positions with debt; null without debt.',
    ),
    targetHealthFactor: Type.Number({ description: 'The health factor `toTarget` brings each position to.' }),
    collateralUsd: USD('Collateral of the positions with debt'),
    debtUsd: USD('Their debt'),
    borrowPositions: Type.Integer(),
    flags: Type.Array(
      Type.Object(
        {
          ...FlagProperties,
          marketId: nullable<string>('string', 'The market flagged; null for the whole wallet.'),
        },
        { additionalProperties: false },
      ),
      { description: 'Critical first, in position order.' },
    ),
    positions: Type.Array(
      Type.Object(
        {
          marketId: Type.String(),
          protocol: ProtocolSchema,
          chainId: Type.Integer(),
          collateral: Type.Object(
            {
              symbol: Type.String(),
              priceUsd: Type.Number(),
              liquidationPriceUsd: NullableNumber(
                "The collateral price at which the health factor (the account's, for pooled protocols) reaches 1, all else fixed.",
              ),
            },
            { additionalProperties: false },
          ),
          loan: Type.Object(
            { symbol: Type.String(), priceUsd: Type.Number() },
            { additionalProperties: false },
          ),
          collateralUsd: USD('Collateral'),
          debtUsd: USD('Debt'),
          healthFactor: Type.Number(),
          toTarget: Type.Object(
            {
              repayUsd: USD(
                "Debt to repay to reach the target: debt x (1 - healthFactor / target), the account's debt for pooled protocols; 0 when at or above it",
              ),
              repayAmount: Type.Number({ description: 'The same in loan tokens at their price now.' }),
              addCollateralUsd: NullableNumber(
                "Collateral to add instead, USD: collateral x (target / healthFactor - 1); for pooled protocols, of this market's collateral at its lltv toward the account: (target x debt - sum(collateral x lltv)) / lltv; 0 when at or above it; null without collateral.",
              ),
              addCollateralAmount: NullableNumber('The same in collateral tokens at their price now.'),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'Positions with debt, weakest first.' },
    ),
  },
  { additionalProperties: false },
);

export const MarketBriefSchema = Type.Object(
  {
    marketId: Type.String(),
    protocol: ProtocolSchema,
    chainId: Type.Integer(),
    summary: Type.String({
      description: 'One sentence: the market, its size and use, its most severe flag.',
    }),
    keyFigures: Type.Object(
      {
        supplyUsd: NullableNumber(
          'Supplied, USD; null without a USD price of the loan token (flag NO_USD_PRICE).',
        ),
        borrowUsd: NullableNumber('Borrowed, USD; null without a USD price of the loan token.'),
        utilization: Type.Number(),
        supplyApy: Type.Number(),
        borrowApy: Type.Number(),
        availableLiquidityUsd: NullableNumber(
          'Available to withdraw or borrow, USD; null without a USD price of the loan token.',
        ),
        lltv: Type.Number(),
        borrowPositions: Type.Integer(),
        liquidatablePositions: Type.Integer(),
        debtLiquidatableUsd: USD('Debt of the liquidatable positions'),
        oracleStalenessRatio: NullableNumber(
          'Seconds since the oracle updated over its heartbeat; null without an oracle.',
        ),
        top10BorrowerShare: Type.Number({ description: "The 10 largest borrowers' share of the debt." }),
      },
      { additionalProperties: false },
    ),
    flags: Type.Array(Type.Object(FlagProperties, { additionalProperties: false }), {
      description: 'Critical first.',
    }),
    stress: Type.Array(
      Type.Object(
        {
          collateralPriceChange: Type.Number(),
          newlyLiquidatable: Type.Integer(),
          debtAtRiskUsd: USD('Debt of the positions liquidatable after the fall'),
          badDebtUsd: USD('Estimated bad debt'),
        },
        { additionalProperties: false },
      ),
      { description: 'Collateral falls of 10 and 20 % (GET /risk/markets/{marketId} has the method).' },
    ),
  },
  { additionalProperties: false },
);

export const VaultSchema = Type.Object(
  {
    protocol: Type.Unsafe<'morpho' | 'euler'>({ type: 'string', enum: ['morpho', 'euler'] }),
    chainId: Type.Integer({ examples: [1] }),
    address: ADDRESS,
    name: Type.String({ examples: ['Steakhouse USDC'] }),
    symbol: Type.String(),
    asset: Type.Object({ address: ADDRESS, symbol: Type.String() }, { additionalProperties: false }),
    curator: nullable<string>('string', 'Morpho vaults: the curator; null for Euler vaults or when unknown.'),
    governor: nullable<string>(
      'string',
      'Euler vaults: the governor; null for Morpho vaults or when unknown.',
    ),
    fee: Type.Number({
      description: 'Fee on the interest earned (Morpho performance fee, Euler interest fee), 0 to 1.',
    }),
    totalAssetsUsd: nullable<number>(
      'number',
      "Sum of the allocations: the vault's share of each market's supply now, USD; null when a market it supplies has no USD price of its asset.",
    ),
    apy: Type.Number({
      description:
        'Supply APY of the allocations weighted by their USD (by their amounts of the asset when one has no USD price), net of the fee (rewards excluded), decimal.',
    }),
    allocations: Type.Array(
      Type.Object(
        {
          marketId: Type.String({ description: 'Market uniqueKey.' }),
          collateral: nullable<string>('string', 'Collateral symbol; null when the market is not served.'),
          loan: nullable<string>('string', 'Loan symbol; null when the market is not served.'),
          supplyUsd: nullable<number>(
            'number',
            'What the vault supplies to the market, USD; null when the market has no USD price of the asset.',
          ),
          share: Type.Number({ description: "The allocation's part of the vault's assets, 0 to 1." }),
          supplyCapUsd: nullable<number>(
            'number',
            "The most the vault may supply to the market, USD at the market's price now; null: no cap, or no USD price of the asset (supplyCap says which).",
          ),
          supplyCap: nullable<number>(
            'number',
            'The same cap in units of the asset (8 significant digits); null: no cap.',
          ),
          capUsage: nullable<number>(
            'number',
            'What the vault supplies to the market over its cap, in units of the asset (else USD); null without a cap.',
          ),
          supplyApy: nullable<number>('number', "The market's supply APY, decimal."),
          strategyType: nullable<string>('string', "The market's strategy type."),
          riskLevel: Type.Unsafe<(typeof RISK_LEVELS)[number] | null>({
            type: ['string', 'null'],
            enum: [...RISK_LEVELS, null],
            description: "The market's strategy risk level.",
          }),
          oracleHealth: OracleHealthSchema,
        },
        { additionalProperties: false },
      ),
      { description: 'Largest first.' },
    ),
  },
  { additionalProperties: false },
);

const ClampSchema = Type.Object({ requested: Type.Unknown(), applied: Type.Unknown() });

export const MetaSchema = Type.Object({
  latencyMs: Type.Number({ description: 'Server time from receipt to serialization, ms.' }),
  freshness: Type.Unsafe<string>({
    type: 'string',
    enum: ['live', 'cached', 'snapshot'],
    description: '`live` (<= 60 s old), `cached` (<= 15 min) or `snapshot` (older, or sandbox data).',
  }),
  source: Type.String({
    description: 'Protocols of the returned items, sorted, comma-joined.',
    examples: ['aave,morpho'],
  }),
  clamped: Type.Optional(
    Type.Object(
      {
        limit: Type.Optional(ClampSchema),
        chainIds: Type.Optional(ClampSchema),
        startDate: Type.Optional(ClampSchema),
      },
      { description: 'Present when a tier clamp changed the request.' },
    ),
  ),
  total: Type.Optional(Type.Integer({ description: 'Items in scope before limit and offset (lists only).' })),
  nextCursor: Type.Optional(
    Type.String({
      description:
        'Lists paged by cursor: pass it as `cursor` to get the next page (same parameters otherwise). Absent on the last page.',
    }),
  ),
  asOf: Type.Optional(
    Type.String({
      description:
        'ISO 8601 UTC time of the last successful refresh of the stalest source behind the answer (data routes; ' +
        'for the living sandbox, the instant of its last simulation tick).',
      examples: ['2026-11-24T12:00:00.000Z'],
    }),
  ),
  blocks: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Integer({ minimum: 0 }), {
      description:
        "Chain data: the block each chain's data reflects, by chain id (the lowest last block of the sources " +
        'reporting that chain). Absent for the sandbox.',
      examples: [{ '1': 21_000_000, '8453': 23_000_000 }],
    }),
  ),
});

// ---- response headers, documented on the responses that carry them ---------------------------

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ type, description });

/** On every answer. */
export const REQUEST_ID_HEADER = {
  'X-Request-Id': header(
    'Id of this request: the X-Request-Id you sent (1-128 of [A-Za-z0-9._:-]) or the trace id of your traceparent, else ours.',
  ),
};

/** On every answer to a request that reached the rate limiter (not on 401). */
export const RATE_HEADERS = {
  'X-RateLimit-Limit': header('Requests allowed per second (the per-second window).', 'integer'),
  'X-RateLimit-Remaining': header('Requests left in the window after this one.', 'integer'),
  'X-RateLimit-Reset': header('Unix ms when the oldest request in the window leaves it.', 'integer'),
  'RateLimit-Policy': header(
    'Every policy that applies (the per-second window; on a counted request also the daily and the monthly quota, a month counted as 30 days), e.g. `"per-second";q=20;w=1, "daily";q=10000;w=86400, "monthly";q=300000;w=2592000`.',
  ),
  RateLimit: header('The policy closest to exhaustion, e.g. `"daily";r=9000;t=43200`.'),
};

/** On data answers (200 and 304), DECISIONS D19. */
export const CACHE_HEADERS = {
  ETag: header(
    'Strong tag of the data in the answer, one per content-coding (`"…-br"`, `"…-gzip"` for compressed bodies); send it back in If-None-Match to get 304 while unchanged (any coding\'s tag revalidates).',
  ),
  'Cache-Control': header(
    '`private, max-age=0, must-revalidate` on data; `no-store` on errors and client answers.',
  ),
};

const RETRY_AFTER_HEADER = { 'Retry-After': header('Seconds to wait before retrying.', 'integer') };
const AUTHENTICATE_HEADER = {
  'WWW-Authenticate': header('`Bearer`: the scheme a key is sent with (RFC 6750).'),
};

/** The headers of a data route's 200. */
export const DATA_HEADERS = { ...REQUEST_ID_HEADER, ...RATE_HEADERS, ...CACHE_HEADERS };
/** The headers of a client route's success. */
export const CLIENT_HEADERS = {
  ...REQUEST_ID_HEADER,
  ...RATE_HEADERS,
  'Cache-Control': CACHE_HEADERS['Cache-Control'],
};

/**
 * The shared schemas, by name: registered once (app.addSchema) and referenced by the routes, so
 * the OpenAPI document names them under components.schemas and generated clients get named
 * types. The serializers compile the schemas themselves (serialize.ts), not the references.
 */
export const NAMED_SCHEMAS = {
  Market: () => MarketSchema,
  PositionAtRisk: () => PositionAtRiskSchema,
  Position: () => PositionSchema,
  Portfolio: () => PortfolioSchema,
  MarketRisk: () => MarketRiskSchema,
  Stress: () => StressSchema,
  Overview: () => OverviewSchema,
  TimeseriesPoint: () => TimeseriesPointSchema,
  WalletRisk: () => WalletRiskSchema,
  MarketBrief: () => MarketBriefSchema,
  Token: () => TokenSchema,
  TokenDetail: () => TokenDetailSchema,
  Oracle: () => OracleSchema,
  OracleDetail: () => OracleDetailSchema,
  OracleRound: () => OracleRoundSchema,
  MarketHistoryPoint: () => MarketHistoryPointSchema,
  Liquidation: () => LiquidationSchema,
  Vault: () => VaultSchema,
  MarketRating: () => MarketRatingSchema,
  VaultRating: () => VaultRatingSchema,
  RatingChange: () => RatingChangeSchema,
  RatingMethodology: () => RatingMethodologySchema,
  ResearchReportSummary: () => ResearchReportSummarySchema,
  ResearchReport: () => ResearchReportSchema,
  Meta: () => MetaSchema,
  Error: () => ErrorSchema,
} as const;

/** A reference to a named schema (see NAMED_SCHEMAS), typed as the schema it names. */
function named<K extends keyof typeof NAMED_SCHEMAS>(name: K) {
  return Type.Unsafe<import('typebox').Static<ReturnType<(typeof NAMED_SCHEMAS)[K]>>>({ $ref: `${name}#` });
}
export const MarketRef = named('Market');
export const PositionRef = named('Position');
export const PortfolioRef = named('Portfolio');
export const MarketRiskRef = named('MarketRisk');
export const StressRef = named('Stress');
export const OverviewRef = named('Overview');
export const TimeseriesPointRef = named('TimeseriesPoint');
export const WalletRiskRef = named('WalletRisk');
export const MarketBriefRef = named('MarketBrief');
export const TokenRef = named('Token');
export const TokenDetailRef = named('TokenDetail');
export const OracleRef = named('Oracle');
export const OracleDetailRef = named('OracleDetail');
export const OracleRoundRef = named('OracleRound');
export const MarketHistoryPointRef = named('MarketHistoryPoint');
export const LiquidationRef = named('Liquidation');
export const VaultRef = named('Vault');
export const MarketRatingRef = named('MarketRating');
export const VaultRatingRef = named('VaultRating');
export const RatingChangeRef = named('RatingChange');
export const RatingMethodologyRef = named('RatingMethodology');
export const PositionAtRiskRef = named('PositionAtRisk');
export const ResearchReportSummaryRef = named('ResearchReportSummary');
export const ResearchReportRef = named('ResearchReport');
export const MetaRef = named('Meta');

export function envelope<T extends import('typebox').TSchema>(
  data: T,
  description = 'The data, and meta: how fresh it is, where it comes from, what was clamped.',
) {
  return { ...Type.Object({ data, meta: MetaRef }), description, headers: DATA_HEADERS };
}

const ERROR_EXAMPLES: Record<ErrorCode, Record<string, unknown>> = {
  INVALID_PARAMETER: {
    error: 'INVALID_PARAMETER',
    message: "Invalid parameter 'limit': must be an integer >= 1",
    details: [{ parameter: 'limit', problem: 'must be an integer >= 1' }],
  },
  UNAUTHORIZED: {
    error: 'UNAUTHORIZED',
    message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
  },
  TIER_FORBIDDEN: {
    error: 'TIER_FORBIDDEN',
    message: "The free tier does not include the 'risk' endpoints.",
    tier: 'free',
    category: 'risk',
  },
  CHAIN_FORBIDDEN: {
    error: 'CHAIN_FORBIDDEN',
    message: 'The free tier does not include chain 8453.',
    tier: 'free',
    chainId: 8453,
  },
  KEY_LIMIT_REACHED: {
    error: 'KEY_LIMIT_REACHED',
    message:
      'Your account holds 2 active Free live keys, the most the tier allows (2); revoke one to create another.',
    tier: 'free',
    limit: 2,
  },
  WEBHOOK_LIMIT_REACHED: {
    error: 'WEBHOOK_LIMIT_REACHED',
    message:
      'Your account holds 10 live webhooks, the most the Pro tier allows (10); delete one to create another.',
    tier: 'pro',
    limit: 10,
  },
  STREAM_LIMIT_REACHED: {
    error: 'STREAM_LIMIT_REACHED',
    message: 'This key holds 2 event streams open, the most the Pro tier allows (2); retry after one closes.',
    tier: 'pro',
    limit: 2,
    retryAfter: 5,
  },
  KEY_CREATION_RATE_EXCEEDED: {
    error: 'KEY_CREATION_RATE_EXCEEDED',
    message:
      'Your account created 5 live keys in the last 24 hours, the most the Free tier allows (5); retry after 3600 s.',
    limit: 5,
    retryAfter: 3599.5,
  },
  NOT_FOUND: { error: 'NOT_FOUND', message: 'No route GET /api/v1/nothing.' },
  MARKET_NOT_FOUND: { error: 'MARKET_NOT_FOUND', message: "No market 'morpho-1-0xabc'." },
  TOKEN_NOT_FOUND: {
    error: 'TOKEN_NOT_FOUND',
    message: 'No token 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  ORACLE_NOT_FOUND: {
    error: 'ORACLE_NOT_FOUND',
    message: 'No oracle 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  VAULT_NOT_FOUND: {
    error: 'VAULT_NOT_FOUND',
    message: 'No vault 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  REPORT_NOT_FOUND: {
    error: 'REPORT_NOT_FOUND',
    message: "No research report '2026-01-01-morpho'.",
  },
  KEY_NOT_FOUND: { error: 'KEY_NOT_FOUND', message: "No API key 'key_abc' on this account." },
  WEBHOOK_NOT_FOUND: { error: 'WEBHOOK_NOT_FOUND', message: "No webhook 'wh_abc' on this account." },
  METHOD_NOT_ALLOWED: {
    error: 'METHOD_NOT_ALLOWED',
    message: 'PUT is not allowed on /api/v1/markets; use GET, HEAD, OPTIONS.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    error: 'IDEMPOTENCY_KEY_IN_USE',
    message: 'A request with this Idempotency-Key is still under way; retry after 1 s.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    error: 'IDEMPOTENCY_KEY_REUSED',
    message:
      'This Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request.',
  },
  PAYLOAD_TOO_LARGE: { error: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large.' },
  REQUEST_TIMEOUT: { error: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' },
  HEADERS_TOO_LARGE: {
    error: 'HEADERS_TOO_LARGE',
    message: 'The request headers are too large (16 KB at most).',
  },
  UNSUPPORTED_MEDIA_TYPE: { error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json.' },
  RATE_LIMIT_EXCEEDED: {
    error: 'RATE_LIMIT_EXCEEDED',
    message: 'Rate limit of 5 requests per second exceeded; retry after 0.412 s',
    retryAfter: 0.412,
  },
  DAILY_QUOTA_EXCEEDED: {
    error: 'DAILY_QUOTA_EXCEEDED',
    message: 'Daily quota of 1000 requests exceeded; it resets at 00:00 UTC.',
    limit: 1000,
    used: 1001,
  },
  MONTHLY_QUOTA_EXCEEDED: {
    error: 'MONTHLY_QUOTA_EXCEEDED',
    message: 'Monthly quota of 10000 requests exceeded; it resets on the 1st at 00:00 UTC.',
    limit: 10000,
    used: 10001,
  },
  INTERNAL_ERROR: { error: 'INTERNAL_ERROR', message: 'An unexpected error occurred. Request id: req-1a2b' },
  SERVICE_UNAVAILABLE: {
    error: 'SERVICE_UNAVAILABLE',
    message: 'The service is shutting down; retry shortly.',
  },
};

/** The error body schema: `{ error, message, ...extra }` (DECISIONS D6). */
export const ErrorSchema = Type.Object(
  {
    error: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Machine-readable error code.',
    }),
    message: Type.String({ description: 'Human-readable explanation.' }),
    details: Type.Optional(
      Type.Array(Type.Object({ parameter: Type.String(), problem: Type.String() }), {
        description: 'INVALID_PARAMETER: each offending parameter.',
      }),
    ),
    retryAfter: Type.Optional(
      Type.Number({
        description: 'RATE_LIMIT_EXCEEDED, KEY_CREATION_RATE_EXCEEDED: seconds to wait, to the ms.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ description: 'Quota errors: the quota. Key limits: the most the tier allows.' }),
    ),
    used: Type.Optional(Type.Integer({ description: 'Quota errors: requests counted, greater than limit.' })),
    tier: Type.Optional(Type.String()),
    category: Type.Optional(Type.String()),
    chainId: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

/** The text of a status, as node:http names it. */
const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** What a status of the error vocabulary means, for its description. */
const STATUS_MEANING: Partial<Record<number, string>> = {
  405: 'The path exists, but not with this method (answered before authentication); `Allow` lists the methods it has.',
  408: 'The request (headers and body) did not arrive in time; the connection is closed.',
  429: 'Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry.',
  431: 'The request headers are over 16 KB; the connection is closed.',
  503: 'Overloaded, shutting down, or a backend briefly unavailable: retry after `Retry-After` seconds.',
};

const ALLOW_HEADER = { Allow: header('The methods the path has, e.g. `GET, OPTIONS`.') };

/** Example of a request without a valid key refused for its address's anonymous budget. */
const ANONYMOUS_EXAMPLE = {
  error: 'RATE_LIMIT_EXCEEDED',
  message: 'Too many requests without an API key from this address; retry after 1 s.',
  retryAfter: 1,
};

/** Error responses of a route, grouped by status, with an example of each code. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of new Set(codes)) {
    const s = ERROR_STATUS[c];
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) {
    const examples: Record<string, unknown> = Object.fromEntries(
      list.map((c) => [c, { value: ERROR_EXAMPLES[c] }]),
    );
    // Any request without a valid key may be refused for its address's budget.
    if (status === 429) examples.ANONYMOUS = { summary: 'Without a valid key', value: ANONYMOUS_EXAMPLE };
    const meaning = STATUS_MEANING[status];
    out[status] = {
      description: `${REASON[status] ?? 'Error'}: ${list.map((c) => `\`${c}\``).join(' or ')}.${meaning ? ` ${meaning}` : ''}`,
      // The named Error schema, with one example per code.
      content: { 'application/json': { schema: { $ref: 'Error#' }, examples } },
      headers: {
        ...REQUEST_ID_HEADER,
        // Every error but a missing or wrong key passed the rate limiter first.
        ...(status === 401 ? AUTHENTICATE_HEADER : RATE_HEADERS),
        'Cache-Control': CACHE_HEADERS['Cache-Control'],
        ...(status === 429 || status === 503 || status === 409 ? RETRY_AFTER_HEADER : {}),
        ...(status === 405 ? ALLOW_HEADER : {}),
      },
    };
  }
  return out;
}

/** A data route's answer when the client's If-None-Match still matches. */
export const NOT_MODIFIED = {
  304: {
    ...Type.Null({
      description:
        'Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request.',
    }),
    headers: DATA_HEADERS,
  },
};

/** Responses of the market list routes (list, search). */
export const MARKET_LIST_RESPONSES = {
  200: envelope(Type.Array(MarketRef)),
  ...NOT_MODIFIED,
  ...errorResponses(['INVALID_PARAMETER', ...AUTHENTICATED_ERRORS]),
};
