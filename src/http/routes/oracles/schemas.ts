import { Type } from '@fastify/type-provider-typebox';
import { ORACLE_PROVIDERS, ORACLE_TYPES } from '../../../domain/enums.ts';
import type { OracleHealth } from '../../../domain/types.ts';
import { ADDRESS, nullable, ProtocolSchema, ref, UsdOrNull } from '../../schemas.ts';

/** The oracles area's schemas: an oracle, its feeds and their freshness, its rounds. */

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

export const OracleHealthSchema = Type.Unsafe<OracleHealth | null>({
  ...Type.Object(OracleHealthProperties),
  type: ['object', 'null'],
  description: 'Oracle freshness (the stalest feed of a composite oracle); null without oracle data.',
});

/** A price feed with its promises and its freshness now (docs/decisions.md "Oracle health"). */
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

export const OracleRef = ref('Oracle', OracleSchema);
export const OracleDetailRef = ref('OracleDetail', OracleDetailSchema);
export const OracleRoundRef = ref('OracleRound', OracleRoundSchema);
