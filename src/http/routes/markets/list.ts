import { Type } from '@fastify/type-provider-typebox';
import { listMarkets } from '../../../queries/markets.ts';
import type { RouteDeps } from '../../context.ts';
import { ChainIdsParam, LimitParam, ProtocolParam } from '../../params.ts';
import type { Api } from '../types.ts';
import { sendMarketList } from './market-list.ts';
import { MARKET_LIST_RESPONSES } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 1000 } as const;

export function registerMarketsList(app: Api, deps: RouteDeps): void {
  app.get(
    '/markets',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listMarkets',
        summary: 'List markets',
        description:
          'Markets sorted by total supply (USD), largest first. Page with `offset`; `meta.total` is the number of markets in scope.',
        querystring: Type.Object(
          {
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            offset: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: 10_000_000,
                description: 'Markets to skip (default 0).',
                examples: [0],
              }),
            ),
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
        listMarkets(model, { protocol: q.protocol, chainIds, offset: q.offset ?? 0, limit }),
      );
    },
  );
}
