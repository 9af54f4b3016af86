import { Type } from '@fastify/type-provider-typebox';
import { RISK_LEVELS } from '../../../domain/enums.ts';
import { ADDRESS, nullable, ref } from '../../schemas.ts';
import { OracleHealthSchema } from '../oracles/schemas.ts';

/** The vaults area's schema: a vault, its allocations and (Morpho vaults read on chain) its governance. */

const DUE = {
  validAt: Type.String({
    format: 'date-time',
    description: 'From when anyone may accept it (it applies once accepted).',
  }),
  acceptable: Type.Boolean({ description: 'Whether validAt has passed.' }),
};

const GovernanceSchema = Type.Object(
  {
    owner: ADDRESS,
    guardian: nullable<string>('string', 'May revoke pending changes; null: none.'),
    feeRecipient: nullable<string>('string', 'Receives the performance fee; null: none set.'),
    timelockSeconds: Type.Integer({
      description:
        'The delay before a cap raise, a timelock cut, a new guardian or a market removal may be accepted.',
    }),
    supplyQueue: Type.Array(Type.String(), { description: 'Market uniqueKeys deposits go to, in order.' }),
    withdrawQueue: Type.Array(Type.String(), {
      description: 'Market uniqueKeys withdrawals come from, in order: every market the vault has enabled.',
    }),
    totalAssets: Type.Number({
      description:
        "The vault's supply in all its markets, idle ones included, in units of the asset (8 significant digits): its supply shares valued at each market's state of the last pass.",
    }),
    idleAssets: Type.Number({
      description:
        'Its part in idle markets (no collateral: no borrower, no interest), in no allocation; counted in totalAssetsUsd, and at a 0 APY in apy.',
    }),
    lostAssets: nullable<number>(
      'number',
      'Bad debt its markets realized against the vault, in units of the asset (MetaMorpho v1.1); null: a v1.0 vault, which does not track it.',
    ),
    pendingCaps: Type.Array(
      Type.Object(
        {
          marketId: Type.String({ description: 'Market uniqueKey.' }),
          cap: nullable<number>('number', 'The cap raised to, in units of the asset; null: no cap.'),
          ...DUE,
        },
        { additionalProperties: false },
      ),
      { description: 'Cap raises waiting for the timelock.' },
    ),
    pendingRemovals: Type.Array(
      Type.Object(
        {
          marketId: Type.String({ description: 'Market uniqueKey.' }),
          removableAt: Type.String({
            format: 'date-time',
            description:
              'From when the market may be removed from the withdraw queue (its supply written off).',
          }),
          removable: Type.Boolean({ description: 'Whether removableAt has passed.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Markets submitted for removal (their cap set to 0).' },
    ),
    pendingTimelock: Type.Union(
      [
        Type.Object(
          { seconds: Type.Integer({ description: 'The new timelock.' }), ...DUE },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description: 'A timelock cut waiting for the current timelock (a raise applies at once); null: none.',
      },
    ),
    pendingGuardian: Type.Union(
      [
        Type.Object(
          { guardian: nullable<string>('string', 'The new guardian; null: none.'), ...DUE },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'A guardian change waiting for the timelock; null: none.' },
    ),
    block: Type.Integer({
      description:
        "The block the vault's contract was last read at: again at each pass that sees one of its own logs.",
    }),
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
      "Sum of the allocations (the vault's share of each market's supply now) and of its idle assets (governance.idleAssets), USD; null when a market it supplies has no USD price of its asset.",
    ),
    apy: Type.Number({
      description:
        'Supply APY of the allocations weighted by their USD (by their amounts of the asset when one has no USD price), idle assets earning none, net of the fee (rewards excluded), decimal.',
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
    governance: Type.Union([GovernanceSchema, Type.Null()], {
      description:
        "A Morpho vault read from its contract on chain: its roles, queues, total assets and the changes its timelock holds. Null for Euler vaults and where the vault's source does not read them (the Morpho API, the sandbox).",
    }),
  },
  { additionalProperties: false },
);

export const VaultRef = ref('Vault', VaultSchema);
