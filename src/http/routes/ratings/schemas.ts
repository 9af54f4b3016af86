import { Type } from '@fastify/type-provider-typebox';
import { PROTOCOLS } from '../../../domain/enums.ts';
import { GRADES, type Grade, NOT_RATED, type RatedGrade, ratingMethodology } from '../../../domain/rating.ts';
import { ref } from '../../schemas.ts';

/**
 * Response schemas of the ratings area (GET /ratings/...): named in the OpenAPI document as
 * MarketRating, VaultRating, RatingChange and RatingMethodology.
 */

type Primitive = 'string' | 'number' | 'integer';
const nullable = <T>(type: Primitive, description: string) =>
  Type.Unsafe<T | null>({ type: [type, 'null'], description });

const GradeSchema = Type.Unsafe<Grade>({
  type: 'string',
  enum: [...GRADES],
  description:
    'Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below 10).',
});

const RatedGradeSchema = Type.Unsafe<RatedGrade>({
  type: 'string',
  enum: [...GRADES, NOT_RATED],
  description:
    'Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below ' +
    '10); NR: not graded (below the size floor, or a component without the data it needs; `reason` says which).',
});

const REASON = nullable<string>(
  'string',
  'Why it is not graded (grade NR), with the figures; null when graded.',
);

const Score = (description: string) => Type.Number({ minimum: 0, maximum: 100, description });
const NullableScore = (description: string) =>
  Type.Unsafe<number | null>({ type: ['number', 'null'], minimum: 0, maximum: 100, description });

const ComponentSchema = Type.Object(
  {
    score: Score('The component score, 0 to 100 (2 decimals).'),
    weight: Type.Number({ description: "The component's weight in the overall score." }),
    explanation: Type.String({ description: 'How the score was reached, in one line.' }),
  },
  { additionalProperties: false },
);

const RATED_AT = Type.String({
  description: 'ISO 8601 UTC instant the rating was computed at (ratings are computed daily at 00:00 UTC).',
});
const VERSION = Type.String({
  description: 'Version of the methodology (GET /ratings/methodology).',
  examples: ['1.0.0'],
});

export const MarketRatingSchema = Type.Object(
  {
    marketId: Type.String({ description: 'Market uniqueKey.' }),
    protocol: Type.Unsafe<(typeof PROTOCOLS)[number]>({ type: 'string', enum: [...PROTOCOLS] }),
    chainId: Type.Integer({ examples: [1] }),
    collateral: Type.String({ description: 'Collateral token symbol.' }),
    loan: Type.String({ description: 'Loan token symbol.' }),
    grade: RatedGradeSchema,
    score: NullableScore(
      'Overall score, 0 to 100: the weighted sum of the component scores (2 decimals); null when not graded (NR).',
    ),
    reason: REASON,
    methodologyVersion: VERSION,
    ratedAt: RATED_AT,
    components: Type.Object(
      {
        oracle: ComponentSchema,
        lltvBuffer: ComponentSchema,
        liquidity: ComponentSchema,
        concentration: ComponentSchema,
        liquidations: ComponentSchema,
        size: ComponentSchema,
        usage: ComponentSchema,
        history: ComponentSchema,
      },
      { additionalProperties: false, description: 'The eight component scores, their weights and why.' },
    ),
    metrics: Type.Object(
      {
        oracleStalenessRatio: nullable<number>(
          'number',
          "The stalest feed's secondsSinceUpdate / heartbeat when rated; null without feed data.",
        ),
        lltv: Type.Number({ description: 'Liquidation loan-to-value, 0 to 1.' }),
        volatility: Type.Number({ description: 'Annualized volatility of the collateral/loan price ratio.' }),
        volatilitySource: Type.Unsafe<'history' | 'family'>({
          type: 'string',
          enum: ['history', 'family'],
          description: "`history`: measured from stored daily prices; `family`: the asset families' default.",
        }),
        volatilityReturns: Type.Integer({
          description: 'Daily returns the volatility was measured over (0: family default).',
        }),
        stressMove: Type.Number({
          description: 'The 3-sigma one-day move of the price ratio the buffer is held against.',
        }),
        bufferCoverage: nullable<number>('number', '(1 - lltv) / stressMove; null when the move is 0.'),
        utilization: Type.Number({ description: 'borrow / supply when rated, 0 to 1.' }),
        supplyUsd: nullable<number>(
          'number',
          'Supply when rated, USD; null when the loan token has no USD price.',
        ),
        availableUsd: nullable<number>(
          'number',
          'supply - borrow when rated, USD; null when the loan token has no USD price.',
        ),
        borrowers: Type.Integer({ description: 'Borrowers with debt known.' }),
        historyDays: nullable<number>(
          'integer',
          'UTC days of the last 90 with a stored price of both tokens; null without stored history.',
        ),
        top10Share: Type.Number({
          description: 'Share of the debt owed by the 10 largest borrowers, 0 to 1.',
        }),
        herfindahl: Type.Number({ description: "Herfindahl index of the borrowers' debt, 0 to 1." }),
        liquidations: nullable<number>(
          'integer',
          'Liquidations in the last 90 days; null without stored history.',
        ),
        liquidatedUsd: nullable<number>(
          'number',
          'Debt they repaid, USD; null without stored history, or when one of them has no known USD value (its market had no USD price).',
        ),
        badDebtUsd: nullable<number>('number', 'Bad debt they left, USD; null as liquidatedUsd is.'),
      },
      { additionalProperties: false, description: 'The figures the components were computed from.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        marketId: 'morpho-1-0xb8fc70e82bc5bb53e773626fcc6a23f7eefa036918d7ef216ecfb1950a94a85e',
        protocol: 'morpho',
        chainId: 1,
        collateral: 'wstETH',
        loan: 'WETH',
        grade: 'AA',
        score: 85.7,
        reason: null,
        methodologyVersion: '2.0.0',
        ratedAt: '2026-11-22T00:00:00.000Z',
        components: {
          oracle: {
            score: 85,
            weight: 0.2,
            explanation:
              'Chainlink ChainlinkOracle (2 feeds, composite), no warning; stalest feed at 0.42 of its heartbeat.',
          },
          lltvBuffer: {
            score: 100,
            weight: 0.2,
            explanation:
              'LLTV 94.5 %: buffer 5.5 % against a 3-sigma 1-day move of 0.94 % (volatility 6.0 %/yr, no stored price ' +
              'history: eth-lst/eth family default); coverage 5.84x.',
          },
          liquidity: {
            score: 80,
            weight: 0.15,
            explanation: 'Utilization 90.0 %, $10,000,000 available to withdraw.',
          },
          concentration: {
            score: 65.45,
            weight: 0.1,
            explanation: '40 borrowers: the largest 10 owe 62.0 % of the debt, Herfindahl index 0.071.',
          },
          liquidations: {
            score: 99.84,
            weight: 0.1,
            explanation:
              '2 liquidations in the last 90 days repaid $120,000 (0.13 % of borrow); bad debt $0 (0.00 % of borrow).',
          },
          size: {
            score: 75,
            weight: 0.1,
            explanation: '$100,000,000 supplied (the floor of $100,000 scores 0, $1,000,000,000 scores 100).',
          },
          usage: {
            score: 53.4,
            weight: 0.05,
            explanation: '40 borrowers with debt (1,000 score 100).',
          },
          history: {
            score: 100,
            weight: 0.1,
            explanation: '90 days of stored prices of both tokens in the last 90.',
          },
        },
        metrics: {
          oracleStalenessRatio: 0.42,
          lltv: 0.945,
          volatility: 0.06,
          volatilitySource: 'family',
          volatilityReturns: 0,
          stressMove: 0.00942163,
          bufferCoverage: 5.8376307,
          utilization: 0.9,
          supplyUsd: 100_000_000,
          availableUsd: 10_000_000,
          borrowers: 40,
          historyDays: 90,
          top10Share: 0.62,
          herfindahl: 0.071,
          liquidations: 2,
          liquidatedUsd: 120_000,
          badDebtUsd: 0,
        },
      },
    ],
  },
);

export const VaultRatingSchema = Type.Object(
  {
    protocol: Type.Unsafe<'morpho' | 'euler'>({ type: 'string', enum: ['morpho', 'euler'] }),
    chainId: Type.Integer({ examples: [1] }),
    address: Type.String({ pattern: '^0x[0-9a-f]{40}$', description: 'Lower-case vault address.' }),
    name: Type.String(),
    asset: Type.String({ description: 'Symbol of the asset the vault lends.' }),
    grade: RatedGradeSchema,
    score: NullableScore(
      'Overall score, 0 to 100: 0.7 x markets + 0.15 x diversification + 0.15 x size (2 decimals); null when not graded (NR).',
    ),
    reason: REASON,
    methodologyVersion: VERSION,
    ratedAt: RATED_AT,
    components: Type.Object(
      { markets: ComponentSchema, diversification: ComponentSchema, size: ComponentSchema },
      { additionalProperties: false, description: 'The three component scores, their weights and why.' },
    ),
    metrics: Type.Object(
      {
        totalAssetsUsd: nullable<number>(
          'number',
          "The vault's supply over its markets when rated, USD; null when one of them has no USD price of the asset (then allocations weigh by amounts of the asset).",
        ),
        allocations: Type.Integer({ description: 'Markets allocated to.' }),
        ratedAllocations: Type.Integer({ description: 'Of them, markets rated (served now).' }),
        herfindahl: Type.Number({ description: 'Herfindahl index of the allocation shares, 0 to 1.' }),
        largestShare: Type.Number({ description: 'The largest allocation share, 0 to 1.' }),
      },
      { additionalProperties: false },
    ),
    allocations: Type.Array(
      Type.Object(
        {
          marketId: Type.String({ description: 'Market uniqueKey.' }),
          share: Type.Number({ description: "The allocation's part of the vault's assets, 0 to 1." }),
          grade: Type.Unsafe<RatedGrade | null>({
            type: ['string', 'null'],
            enum: [...GRADES, NOT_RATED, null],
            description: "The market's grade (NR: not graded); null when the market is not served.",
          }),
          score: nullable<number>(
            'number',
            "The market's score; null when the market is not served or not graded.",
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'Largest first.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        protocol: 'morpho',
        chainId: 1,
        address: '0xbeef01735c132ada46aa9aa4c54623caa92a64cb',
        name: 'Steakhouse USDC',
        asset: 'USDC',
        grade: 'BBB',
        score: 67.68,
        reason: null,
        methodologyVersion: '2.0.0',
        ratedAt: '2026-11-22T00:00:00.000Z',
        components: {
          markets: {
            score: 79,
            weight: 0.7,
            explanation: 'Supply-weighted score of its 2 graded markets ($2,000,000 allocated): 79.00.',
          },
          diversification: {
            score: 50,
            weight: 0.15,
            explanation:
              "Largest allocation 50.0 % of assets; Herfindahl index 0.500 (2.0 markets' worth of diversification).",
          },
          size: {
            score: 32.53,
            weight: 0.15,
            explanation: '$2,000,000 held (the floor of $100,000 scores 0, $1,000,000,000 scores 100).',
          },
        },
        metrics: {
          totalAssetsUsd: 2_000_000,
          allocations: 2,
          ratedAllocations: 2,
          herfindahl: 0.5,
          largestShare: 0.5,
        },
        allocations: [
          {
            marketId: 'morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc',
            share: 0.5,
            grade: 'AA',
            score: 83,
          },
          {
            marketId: 'morpho-1-0x3a85e619751152991742810df6ec69ce473daef99e28a64ab2340d7b7ccfee49',
            share: 0.5,
            grade: 'A',
            score: 75,
          },
        ],
      },
    ],
  },
);

export const RatingChangeSchema = Type.Object(
  {
    at: Type.String({ description: 'ISO 8601 UTC instant of the rating.' }),
    grade: RatedGradeSchema,
    score: NullableScore('Overall score, 0 to 100; null when not graded (grade NR).'),
    reason: nullable<string>(
      'string',
      'Why it was not graded (grade NR), with the figures of that day; null when graded.',
    ),
    previousGrade: Type.Unsafe<RatedGrade | null>({
      type: ['string', 'null'],
      enum: [...GRADES, NOT_RATED, null],
      description: 'The grade recorded before (NR: not graded); null for the first rating recorded.',
    }),
    previousScore: nullable<number>(
      'number',
      'The score recorded before; null for the first rating recorded, and when the one before was not graded.',
    ),
    methodologyVersion: VERSION,
    components: Type.Record(Type.String(), Score('A component score.'), {
      description:
        "Each component's score by name (markets: oracle, lltvBuffer, liquidity, concentration, liquidations, size, usage, history; vaults: markets, diversification, size).",
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        at: '2026-11-22T00:00:00.000Z',
        grade: 'A',
        score: 74.35,
        reason: null,
        previousGrade: 'AA',
        previousScore: 80.1,
        methodologyVersion: '1.0.0',
        components: {
          oracle: 85,
          lltvBuffer: 61.2,
          liquidity: 63.47,
          concentration: 72.5,
          liquidations: 100,
        },
      },
    ],
  },
);

const MethodologyComponentSchema = Type.Object(
  {
    name: Type.String(),
    weight: Type.Number(),
    formula: Type.String({ description: 'The formula, in words, naming the parameters.' }),
    parameters: Type.Record(Type.String(), Type.Number(), {
      description: 'The thresholds and constants by name.',
    }),
  },
  { additionalProperties: false },
);

export const RatingMethodologySchema = Type.Object(
  {
    version: VERSION,
    scale: Type.Object(
      {
        min: Type.Number(),
        max: Type.Number(),
        decimals: Type.Integer({ description: 'Decimals scores are served with.' }),
      },
      { additionalProperties: false },
    ),
    grades: Type.Array(
      Type.Object(
        {
          grade: GradeSchema,
          minScore: Type.Number({ description: 'Lowest score of the grade (inclusive).' }),
          meaning: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'Best first.' },
    ),
    markets: Type.Array(MethodologyComponentSchema, { description: "A market's components." }),
    vaults: Type.Array(MethodologyComponentSchema, { description: "A vault's components." }),
    windowDays: Type.Integer({
      description: 'Days of history the volatility and liquidations are read over.',
    }),
    changeTolerance: Type.Number({
      description: 'Score move (points) that records a new rating in the history.',
    }),
    unknownScore: Type.Number({
      description:
        'Score a component whose data is unknown is shown with (its market or vault is then not graded).',
    }),
    sizeFloorUsd: Type.Number({
      description: 'Assets (USD) below which a market or vault is not graded (NR).',
    }),
    notRated: Type.String({ description: 'When a market or vault is not graded (NR).' }),
    schedule: Type.String({ description: 'When ratings are computed and recorded.' }),
  },
  { additionalProperties: false, examples: [ratingMethodology()] },
);

export const MarketRatingRef = ref('MarketRating', MarketRatingSchema);
export const VaultRatingRef = ref('VaultRating', VaultRatingSchema);
export const RatingChangeRef = ref('RatingChange', RatingChangeSchema);
export const RatingMethodologyRef = ref('RatingMethodology', RatingMethodologySchema);
