import { Type } from '@fastify/type-provider-typebox';
import { listMarketRatings } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { ChainIdsParam, ProtocolParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { MarketRatingRef } from './schemas.ts';
import { GradeParam, MinScoreParam, marketRatingJson, OrderParam, ratingsOf, sendRatings } from './shared.ts';

const ACCESS = { category: 'ratings', limitMax: 1000 } as const;

export function registerMarketRatingsList(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/markets',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listMarketRatings',
        summary: 'List market ratings',
        description:
          "Every market's credit rating: a grade (AAA to D), a 0-100 score and five component scores (oracle, LLTV " +
          'buffer against volatility, liquidity, borrower concentration, liquidations) with why, by score (best first, ' +
          'or `order=asc`), page with `cursor`. Ratings are computed daily at 00:00 UTC, at start-up and when the ' +
          'dataset changes (`meta.asOf`: the data they reflect); see `GET /ratings/methodology`. `meta.total`: ratings ' +
          'matching.',
        querystring: Type.Object(
          {
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            minScore: Type.Optional(MinScoreParam),
            grade: Type.Optional(GradeParam),
            order: Type.Optional(OrderParam),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(MarketRatingRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const set = ratingsOf(deps, model);
      const found = listMarketRatings(model, set, {
        protocol: q.protocol,
        chainIds,
        minScore: q.minScore,
        grade: q.grade,
        order: q.order,
        cursor: q.cursor,
        limit,
      });
      return sendRatings(request, reply, model, set, nowMs, found, marketRatingJson, { list: true, clamped });
    },
  );
}
