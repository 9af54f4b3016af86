import { Type } from '@fastify/type-provider-typebox';
import { ADDRESS, NullableNumber, nullable, ProtocolSchema, ref, USD } from '../../schemas.ts';
import { PositionSchema } from '../positions/schemas.ts';

/** The portfolios area's schema: a wallet across protocols and chains. */

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

export const PortfolioRef = ref('Portfolio', PortfolioSchema);
