import { Type } from '@fastify/type-provider-typebox';
import { type RatingMethodology, ratingMethodology } from '../../../domain/rating.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import type { Api } from '../types.ts';
import { RatingMethodologyRef, RatingMethodologySchema } from './schemas.ts';

export function registerRatingMethodology(app: Api, deps: AppDeps): void {
  // The methodology never changes while the process runs: serialized once, with the size floor set.
  const METHODOLOGY = itemSerializer<RatingMethodology>(RatingMethodologySchema)(
    ratingMethodology(deps.ratings.sizeFloorUsd),
  );
  app.get(
    '/ratings/methodology',
    {
      config: { access: { category: 'ratings' } },
      schema: {
        operationId: 'getRatingMethodology',
        summary: 'Rating methodology',
        description:
          'How ratings are computed, versioned: the 0-100 scale and the grades, each component of a market and of a ' +
          'vault with its weight, its formula in words and its parameters (thresholds, provider scores, family ' +
          'volatilities), the history window, and when a rating change is recorded.',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(RatingMethodologyRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const found = { items: [METHODOLOGY], itemProtocols: [], scopeProtocols: model.catalog.protocols };
      return sendFound(request, reply, model, nowMs, found, (bytes) => bytes, { list: false });
    },
  );
}
