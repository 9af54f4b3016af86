import { Type } from '@fastify/type-provider-typebox';
import { listVaultRatings } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { ChainIdsParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { VaultRatingRef } from './schemas.ts';
import { GradeParam, MinScoreParam, OrderParam, ratingsOf, sendRatings, vaultRatingJson } from './shared.ts';

const ACCESS = { category: 'ratings', limitMax: 500 } as const;

export function registerVaultRatingsList(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/vaults',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listVaultRatings',
        summary: 'List vault ratings',
        description:
          "Every vault's credit rating: 0.8 x the supply-weighted score of the markets it allocates to plus 0.2 x its " +
          'diversification, with its grade and the rating of each allocation, by score (best first, or `order=asc`), ' +
          'page with `cursor`. `meta.total`: ratings matching.',
        querystring: Type.Object(
          {
            protocol: Type.Optional(
              Type.Unsafe<'morpho' | 'euler'>({
                type: 'string',
                enum: ['morpho', 'euler'],
                description: 'Only this protocol.',
              }),
            ),
            chainIds: Type.Optional(ChainIdsParam),
            asset: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 64,
                description: 'Only vaults of this asset symbol (case-insensitive).',
                examples: ['USDC'],
              }),
            ),
            minScore: Type.Optional(MinScoreParam),
            grade: Type.Optional(GradeParam),
            order: Type.Optional(OrderParam),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(VaultRatingRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const set = ratingsOf(deps, model);
      const found = listVaultRatings(model, set, {
        protocol: q.protocol,
        chainIds,
        asset: q.asset,
        minScore: q.minScore,
        grade: q.grade,
        order: q.order,
        cursor: q.cursor,
        limit,
      });
      return sendRatings(request, reply, model, set, nowMs, found, vaultRatingJson, { list: true, clamped });
    },
  );
}
