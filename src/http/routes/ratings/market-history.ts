import { Type } from '@fastify/type-provider-typebox';
import { ratingHistory } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { MarketIdPath, pageParams, requireMarketId, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { RatingChangeRef } from './schemas.ts';
import { ratingChangeJson } from './shared.ts';

const ACCESS = { category: 'ratings', limitMax: 1000, chainParam: 'marketId' } as const;

export function registerMarketRatingHistory(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/markets/:marketId/history',
    {
      config: { access: ACCESS, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'getMarketRatingHistory',
        summary: "A market's rating history",
        description:
          "The changes of a market's rating, oldest first: a rating is recorded when its grade changes, its score " +
          'moves by 2 points or more, or the methodology version changes, and when it stops being graded (grade NR, ' +
          '`score` null, with the `reason`: below the size floor, a component without data) and starts again; NR ' +
          'after NR is no change, whatever its reason. Each with the grade and score before. ' +
          "`startDate` is raised to your tier's history window (meta.clamped); `endDate` defaults to now. Page with " +
          '`cursor`.',
        params: Type.Object({ marketId: MarketIdPath }),
        querystring: Type.Object(
          {
            ...TIME_WINDOW_PARAMS,
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(RatingChangeRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const id = requireMarketId(request.params.marketId, 'marketId');
      const { nowMs, page, clamped, model } = timeWindowRequest(request, q, deps);
      const found = await ratingHistory(model, deps.ratings, { kind: 'market', key: id.key }, page);
      return sendFound(request, reply, model, nowMs, found, ratingChangeJson, { list: true, clamped });
    },
  );
}
