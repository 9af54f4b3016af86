import { z } from 'zod';
import { positionsAtRiskPage } from '../../queries/risk.ts';
import { chainIdsArg, limitArg, marketIdArg, protocolArg } from '../args.ts';
import { marketIdOf } from '../ids.ts';
import { defineTool } from '../tool.ts';

const LIMIT_MAX = 200;

/** `GET /risk/positions-at-risk` as a tool. */
export const positionsAtRiskTool = defineTool({
  name: 'positions_at_risk',
  operationId: 'positionsAtRisk',
  title: 'Positions at risk',
  description:
    'Borrow positions whose health factor is below a threshold (liquidatable ones, below 1, included), ordered by ' +
    'health factor ascending, then borrowed USD descending, as GET /risk/positions-at-risk serves them: wallet, ' +
    'market, collateral and debt in USD, health factor, leverage and distance to liquidation. meta.total counts the ' +
    'whole set; pass meta.nextCursor as `cursor` (the other arguments unchanged) for the next page: the pages of a ' +
    'cursor come from the set its first page took (as of its meta.asOf), for 10 minutes.',
  category: 'risk',
  limitMax: LIMIT_MAX,
  input: {
    healthFactorThreshold: z
      .number()
      .gt(0)
      .max(10)
      .optional()
      .describe('Positions with healthFactor below this value (default 1.1; 0 < x <= 10).'),
    protocol: protocolArg,
    chainIds: chainIdsArg,
    marketId: marketIdArg('Only positions in this market (uniqueKey).').optional(),
    minBorrowUsd: z.number().min(0).max(1e15).optional().describe('Minimum borrowed USD (default 0).'),
    limit: limitArg(LIMIT_MAX),
    cursor: z
      .string()
      .max(1024)
      .optional()
      .describe('meta.nextCursor of the previous page (the other arguments unchanged).'),
  },
  async run(ctx, args) {
    const market = args.marketId === undefined ? undefined : marketIdOf(args.marketId, 'marketId');
    const { limit, chainIds, clamped } = ctx.clamp(args);
    const found = await positionsAtRiskPage(
      ctx.model,
      {
        healthFactorThreshold: args.healthFactorThreshold ?? 1.1,
        protocol: args.protocol,
        chainIds,
        market,
        minBorrowUsd: args.minBorrowUsd ?? 0,
        limit,
      },
      {
        snapshots: ctx.pageSnapshots,
        nowMs: ctx.nowMs,
        cursor: args.cursor,
        caller: ctx.mode,
        json: (i) => Buffer.from(JSON.stringify(ctx.positionAtRisk(i))),
      },
    );
    const data = found.items.map((i) => JSON.parse(Buffer.from(i.json).toString('utf8')) as unknown);
    return { data, found, clamped };
  },
});
