import { Type } from '@fastify/type-provider-typebox';
import { ratingHistory } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { AddressParam, ChainIdPath, pageParams, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { RatingChangeRef } from './schemas.ts';
import { ratingChangeJson } from './shared.ts';

const ACCESS = { category: 'ratings', limitMax: 1000, chainParam: 'chainId' } as const;

export function registerVaultRatingHistory(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/vaults/:chainId/:address/history',
    {
      config: { access: ACCESS, errors: ['VAULT_NOT_FOUND'] },
      schema: {
        operationId: 'getVaultRatingHistory',
        summary: "A vault's rating history",
        description:
          "The changes of a vault's rating, oldest first, recorded as for markets (a grade change, a score move of 2 " +
          'points or more, a new methodology version, the step into NR (not graded: `score` null, with the `reason`) ' +
          "and back out of it; NR after NR is no change). `startDate` is raised to your tier's history window " +
          '(meta.clamped); `endDate` defaults to now. Page with `cursor`.',
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Vault contract address.') }),
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
      const { chainId, address } = request.params;
      const { nowMs, page, clamped, model } = timeWindowRequest(request, q, deps);
      const found = await ratingHistory(model, deps.ratings, { kind: 'vault', chainId, address }, page);
      return sendFound(request, reply, model, nowMs, found, ratingChangeJson, { list: true, clamped });
    },
  );
}
