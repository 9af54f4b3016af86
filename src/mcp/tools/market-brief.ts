import { marketBrief } from '../../queries/agent.ts';
import { marketIdArg } from '../args.ts';
import { marketIdOf } from '../ids.ts';
import { defineTool } from '../tool.ts';

/** `GET /agent/market-brief/{marketId}` as a tool. */
export const marketBriefTool = defineTool({
  name: 'market_brief',
  operationId: 'agentMarketBrief',
  title: 'A market in brief',
  description:
    'A market in one sentence, its key figures, flags with their reasons (liquidatable positions, high utilization, ' +
    'stale or missing oracle, concentrated borrowers, bad debt under a 20 % fall, thin liquidity) and its 10 and 20 % ' +
    'collateral stress, as GET /agent/market-brief/{marketId} serves it. A market on a chain outside your tier is ' +
    'refused (CHAIN_FORBIDDEN).',
  category: 'agent',
  input: {
    marketId: marketIdArg('Market uniqueKey: `<protocol>-<chainId>-<identifier>` (case-insensitive).'),
  },
  run(ctx, args) {
    const id = marketIdOf(args.marketId, 'marketId');
    ctx.requireChain(id.chainId);
    const found = marketBrief(ctx.model, id.key, Math.floor(ctx.nowMs / 1000));
    return { data: found.items[0], found };
  },
});
