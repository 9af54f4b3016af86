import { Type } from '@fastify/type-provider-typebox';
import { ref, USD } from '../../schemas.ts';

/** The research routes' schemas (src/domain/research.ts has the method). */

const usdOrNull = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], {
    description: `${description}, USD (to the cent); null when its token had no USD price.`,
  });
const ADDRESS = Type.String({ description: 'Lower-case 0x address.' });
const nullableArray = <T extends import('typebox').TSchema>(item: T, description: string) =>
  Type.Union([Type.Array(item), Type.Null()], { description });

const ReportBase = {
  id: Type.String({ description: '`<YYYY-MM-DD>-<protocol>`.', examples: ['2026-11-24-morpho'] }),
  date: Type.String({ format: 'date', description: 'The UTC day the report is about.' }),
  protocol: Type.String(),
  title: Type.String(),
  highlights: Type.Array(Type.String(), {
    description: 'Plain sentences, most severe first, from the sections in scope; a quiet day says so.',
  }),
  generatedAt: Type.String({ format: 'date-time' }),
};

const DataSchema = Type.Object(
  {
    kind: Type.Unsafe<'sandbox' | 'market'>({
      type: 'string',
      enum: ['sandbox', 'market'],
      description: '`sandbox`: simulated data (test keys); `market`: data read from the sources.',
    }),
    description: Type.String({ description: 'What the data is, in a sentence.' }),
  },
  { additionalProperties: false, description: 'The data the report rests on.' },
);

export const ResearchReportSummarySchema = Type.Object(
  {
    ...ReportBase,
    chainIds: Type.Array(Type.Integer(), { description: 'The chains it has a section for, in your scope.' }),
    live: Type.Boolean({
      description:
        'True when it lists positions at risk and stale oracles of market data (written right after its day); ' +
        'always false for sandbox data.',
    }),
    data: DataSchema,
  },
  { additionalProperties: false },
);

export const ResearchReportSchema = Type.Object(
  {
    ...ReportBase,
    version: Type.String({ description: 'Version of the digest method.' }),
    data: DataSchema,
    chains: Type.Array(
      Type.Object(
        {
          chainId: Type.Integer(),
          markets: Type.Integer({ description: 'Markets with a daily snapshot that day.' }),
          supplyUsd: USD('Supply summed over them'),
          borrowUsd: USD('Borrow summed over them'),
          utilization: Type.Number(),
          supplyChange: Type.Union([Type.Number(), Type.Null()], {
            description: "Supply over the day before's, minus 1; null without a day before.",
          }),
          liquidations: Type.Integer(),
          unpricedLiquidations: Type.Optional(
            Type.Integer({
              description:
                'Liquidations whose debt has no known USD value (the loan token had no USD price), left out of the USD sums; absent from reports of version 1.0.0.',
            }),
          ),
          liquidatedDebtUsd: USD('Debt the liquidations repaid (the known USD values)'),
          badDebtUsd: USD('Bad debt they left (the known USD values)'),
          utilizationSpikes: Type.Integer({
            description:
              'Markets of the chain with a utilization spike (every one; the list shows the 10 largest).',
          }),
          staleOracles: Type.Union([Type.Integer(), Type.Null()], {
            description:
              'Markets of the chain with a stale oracle at liveAsOf; null for reports written from history alone.',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'One section per chain, largest supply first.' },
    ),
    utilizationSpikes: Type.Array(
      Type.Object(
        {
          chainId: Type.Integer(),
          marketId: Type.String(),
          pair: Type.String(),
          utilization: Type.Number(),
          previousUtilization: Type.Number(),
          change: Type.Number(),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Markets whose utilization rose by 10 points or more, or reached 95 %, over the day; largest rise first (10 at most).',
      },
    ),
    notableLiquidations: Type.Array(
      Type.Object(
        {
          chainId: Type.Integer(),
          marketId: Type.String(),
          txHash: Type.String(),
          at: Type.String({ format: 'date-time' }),
          borrower: ADDRESS,
          debtRepaidUsd: usdOrNull('Debt repaid'),
          collateralSeizedUsd: usdOrNull('Collateral seized'),
          badDebtUsd: usdOrNull('Bad debt'),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The largest liquidations of the day by debt repaid, those of no known USD value last (10 at most).',
      },
    ),
    ratingChanges: Type.Array(
      Type.Object(
        {
          kind: Type.Unsafe<'market' | 'vault'>({ type: 'string', enum: ['market', 'vault'] }),
          subject: Type.String(),
          chainId: Type.Integer(),
          grade: Type.String(),
          score: Type.Number(),
          previousGrade: Type.Union([Type.String(), Type.Null()]),
          previousScore: Type.Union([Type.Number(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      {
        description: "Rating changes of the protocol's markets recorded that day, largest score move first.",
      },
    ),
    positionsAtRisk: nullableArray(
      Type.Object(
        {
          chainId: Type.Integer(),
          marketId: Type.String(),
          user: ADDRESS,
          healthFactor: Type.Number(),
          debtUsd: USD('Debt'),
        },
        { additionalProperties: false },
      ),
      'The largest positions below health factor 1.05 as of liveAsOf; null for reports written from history alone (positions are not kept as history).',
    ),
    staleOracles: nullableArray(
      Type.Object(
        {
          chainId: Type.Integer(),
          marketId: Type.String(),
          oracle: ADDRESS,
          secondsSinceUpdate: Type.Number(),
          stalenessRatio: Type.Number(),
        },
        { additionalProperties: false },
      ),
      'Markets whose oracle was past its heartbeat as of liveAsOf; null as positionsAtRisk.',
    ),
    liveAsOf: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    markdown: Type.String({ description: 'The same report as Markdown.' }),
  },
  { additionalProperties: false },
);

export const ResearchReportSummaryRef = ref('ResearchReportSummary', ResearchReportSummarySchema);
export const ResearchReportRef = ref('ResearchReport', ResearchReportSchema);
