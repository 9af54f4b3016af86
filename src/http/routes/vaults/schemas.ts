import { Type } from '@fastify/type-provider-typebox';
import { RISK_LEVELS } from '../../../domain/enums.ts';
import { ADDRESS, nullable, ref } from '../../schemas.ts';
import { OracleHealthSchema } from '../oracles/schemas.ts';

/** The vaults area's schema: a vault and its allocations. */

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

export const VaultRef = ref('Vault', VaultSchema);
