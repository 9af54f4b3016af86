import { Type } from '@fastify/type-provider-typebox';
import { ADDRESS, nullable, ProtocolSchema, ref, UsdOrNull } from '../../schemas.ts';

/** The liquidations area's schema: one liquidation. */

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

export const LiquidationRef = ref('Liquidation', LiquidationSchema);
