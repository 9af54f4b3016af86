import { Type } from '@fastify/type-provider-typebox';
import { NullableNumber, nullable, ProtocolSchema, ref, USD } from '../../schemas.ts';
import { OracleHealthSchema } from '../oracles/schemas.ts';

/** The risk area's schemas: a position at risk, a market's risk, a stress test. */

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

export const PositionAtRiskRef = ref('PositionAtRisk', PositionAtRiskSchema);
export const MarketRiskRef = ref('MarketRisk', MarketRiskSchema);
export const StressRef = ref('Stress', StressSchema);
