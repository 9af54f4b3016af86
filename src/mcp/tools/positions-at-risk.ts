import { z } from 'zod';
import { positionsAtRisk } from '../../queries/risk.ts';
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
    'market, collateral and debt in USD, health factor, leverage and distance to liquidation.',
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
  },
  run(ctx, args) {
    const market = args.marketId === undefined ? undefined : marketIdOf(args.marketId, 'marketId');
    const { limit, chainIds, clamped } = ctx.clamp(args);
    const found = positionsAtRisk(ctx.model, {
      healthFactorThreshold: args.healthFactorThreshold ?? 1.1,
      protocol: args.protocol,
      chainIds,
      market,
      minBorrowUsd: args.minBorrowUsd ?? 0,
      limit,
    });
    return { data: found.items.map((i) => ctx.positionAtRisk(i)), found, clamped };
  },
});
