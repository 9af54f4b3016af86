import { Type } from '@fastify/type-provider-typebox';
import { nullable, ProtocolSchema, ref, USD } from '../../schemas.ts';

/** The analytics area's schemas: totals now, and per day. */

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

export const OverviewRef = ref('Overview', OverviewSchema);
export const TimeseriesPointRef = ref('TimeseriesPoint', TimeseriesPointSchema);
