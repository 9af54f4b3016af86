import { Type } from '@fastify/type-provider-typebox';
import { ADDRESS, NullableNumber, ProtocolSchema, ref } from '../../schemas.ts';

/** The positions area's schema: a wallet's position. */

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

export const PositionRef = ref('Position', PositionSchema);
