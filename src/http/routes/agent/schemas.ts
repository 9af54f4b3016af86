import { Type } from '@fastify/type-provider-typebox';
import { ADDRESS, NullableNumber, nullable, ProtocolSchema, ref, USD } from '../../schemas.ts';

/** The agent area's schemas: a wallet's risk and a market's brief, with their flags. */

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

export const WalletRiskRef = ref('WalletRisk', WalletRiskSchema);
export const MarketBriefRef = ref('MarketBrief', MarketBriefSchema);
