import { Type } from '@fastify/type-provider-typebox';
import { MAX_SEARCH_LENGTH, MAX_SEARCH_TERMS, searchMarkets } from '../../../queries/markets.ts';
import type { RouteDeps } from '../../context.ts';
import { ChainIdsParam, LimitParam, ProtocolParam } from '../../params.ts';
import type { Api } from '../types.ts';
import { sendMarketList } from './market-list.ts';
import { MARKET_LIST_RESPONSES } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 200 } as const;

export function registerMarketsSearch(app: Api, deps: RouteDeps): void {
  app.get(
    '/markets/search',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'searchMarkets',
        summary: 'Search markets',
        description:
          'Keyword search over collateral and loan symbols and names, market label, vault symbol and the pair notation ' +
          '`COLLATERAL/LOAN`. Every term must match (AND); a term matches a word by prefix, or anywhere in it. ' +
          'Ranking: exact symbol, then prefix, then substring; ties by supply, largest first. ' +
          `At most ${MAX_SEARCH_TERMS} distinct terms.`,
        querystring: Type.Object(
          {
            query: Type.String({
              minLength: 1,
              maxLength: MAX_SEARCH_LENGTH,
              description:
                `Search text, 1 to ${MAX_SEARCH_LENGTH} characters after trimming, of at most ${MAX_SEARCH_TERMS} distinct ` +
                'whitespace-separated terms (a repeated term counts once; case is ignored). More terms: 400 INVALID_PARAMETER.',
              examples: ['wstETH/WETH'],
            }),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
          },
          { additionalProperties: false },
        ),
        response: MARKET_LIST_RESPONSES,
      },
    },
    async (request, reply) => {
      const q = request.query;
      return sendMarketList(request, reply, deps, q, (model, { chainIds, limit }) =>
        searchMarkets(model, { text: q.query, protocol: q.protocol, chainIds, limit }),
      );
    },
  );
}
