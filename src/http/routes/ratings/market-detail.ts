import { Type } from '@fastify/type-provider-typebox';
import { getMarketRating } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MarketIdPath, requireMarketId } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { MarketRatingRef } from './schemas.ts';
import { marketRatingJson, ratingsOf, sendRatings } from './shared.ts';

export function registerMarketRatingDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/markets/:marketId',
    {
      config: { access: { category: 'ratings', chainParam: 'marketId' }, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'getMarketRating',
        summary: "Get one market's rating",
        description:
          "One market's credit rating: grade, score, the five component scores with their weights and explanations, " +
          'and the figures they were computed from (`metrics`). The id is matched case-insensitively.',
        params: Type.Object({ marketId: MarketIdPath }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(MarketRatingRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const id = requireMarketId(request.params.marketId, 'marketId');
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const set = ratingsOf(deps, model);
      const found = getMarketRating(model, set, id.key);
      return sendRatings(request, reply, model, set, nowMs, found, marketRatingJson, { list: false });
    },
  );
}
