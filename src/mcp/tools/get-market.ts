import { must } from '../../domain/must.ts';
import { getMarket } from '../../queries/markets.ts';
import { marketIdArg } from '../args.ts';
import { marketIdOf } from '../ids.ts';
import { defineTool } from '../tool.ts';

/** `GET /markets/{marketId}` as a tool. */
export const getMarketTool = defineTool({
  name: 'get_market',
  operationId: 'getMarket',
  title: 'Get one market',
  description:
    'One lending market by its uniqueKey, as GET /markets/{marketId} serves it: tokens and prices, supply, borrow, ' +
    'available liquidity, utilization, APYs and rewards, LLTV and max leverage, its oracle and oracle health, and ' +
    'its strategy and risk level. A market on a chain outside your tier is refused (CHAIN_FORBIDDEN).',
  category: 'core',
  input: {
    marketId: marketIdArg(
      'Market uniqueKey: `<protocol>-<chainId>-<identifier>` (case-insensitive), e.g. ' +
        '`morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc`.',
    ),
  },
  run(ctx, args) {
    const id = marketIdOf(args.marketId, 'marketId');
    ctx.requireChain(id.chainId);
    const found = getMarket(ctx.model, id.key);
    return { data: ctx.market(must(found.items[0], `market ${id.key}`)), found };
  },
});
