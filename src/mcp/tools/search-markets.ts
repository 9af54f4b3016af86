import { z } from 'zod';
import { MAX_SEARCH_LENGTH, MAX_SEARCH_TERMS, searchMarkets } from '../../queries/markets.ts';
import { chainIdsArg, limitArg, protocolArg } from '../args.ts';
import { defineTool } from '../tool.ts';

const LIMIT_MAX = 200;

/** `GET /markets/search` as a tool. */
export const searchMarketsTool = defineTool({
  name: 'search_markets',
  operationId: 'searchMarkets',
  title: 'Search markets',
  description:
    'Keyword search of lending markets (Morpho, Aave, Spark, Compound, Euler, Fluid) over collateral and loan ' +
    'symbols and names, market label, vault symbol and the pair notation `COLLATERAL/LOAN` (e.g. `wstETH/WETH`). ' +
    'Every term must match; ranked exact symbol, then prefix, then substring, ties by supply. Returns the markets ' +
    'as GET /markets/search does: supply, borrow, APYs, LLTV, oracle and its health, strategy.',
  category: 'core',
  limitMax: LIMIT_MAX,
  input: {
    query: z
      .string()
      .min(1)
      .max(MAX_SEARCH_LENGTH)
      .describe(
        `Search text, 1 to ${MAX_SEARCH_LENGTH} characters after trimming, of at most ${MAX_SEARCH_TERMS} distinct ` +
          'whitespace-separated terms (a repeated term counts once; case is ignored).',
      ),
    limit: limitArg(LIMIT_MAX),
    protocol: protocolArg,
    chainIds: chainIdsArg,
  },
  run(ctx, args) {
    const { limit, chainIds, clamped } = ctx.clamp(args);
    const found = searchMarkets(ctx.model, { text: args.query, protocol: args.protocol, chainIds, limit });
    return { data: found.items.map((ord) => ctx.market(ord)), found, clamped };
  },
});
