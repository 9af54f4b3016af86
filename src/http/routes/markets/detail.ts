import { Type } from '@fastify/type-provider-typebox';
import { getMarket } from '../../../queries/markets.ts';
import type { RouteDeps } from '../../context.ts';
import { MarketIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { marketJson } from '../../serialize.ts';
import { sendMarketAnswer } from '../data-request.ts';
import type { Api } from '../types.ts';
import { MarketRef } from './schemas.ts';

export function registerMarketDetail(app: Api, deps: RouteDeps): void {
  app.get(
    '/markets/:marketId',
    {
      config: { access: { category: 'core', chainParam: 'marketId' }, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'getMarket',
        summary: 'Get one market',
        description:
          'One market with its oracle, oracle health, strategy and risk metrics. The id is matched case-insensitively.',
        params: Type.Object({
          marketId: MarketIdPath,
        }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(MarketRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) =>
      sendMarketAnswer(request, reply, deps, getMarket, (ord, model, nowSec) =>
        marketJson(model, ord, nowSec),
      ),
  );
}
