import { Type } from '@fastify/type-provider-typebox';
import { getVaultRating } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { AddressParam, ChainIdPath } from '../../params.ts';
import { envelope, errorResponses, NOT_MODIFIED } from '../../schemas.ts';
import { type Api, AUTHENTICATED_ERRORS } from '../types.ts';
import { VaultRatingRef } from './schemas.ts';
import { ratingsOf, sendRatings, vaultRatingJson } from './shared.ts';

export function registerVaultRatingDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/vaults/:chainId/:address',
    {
      config: { access: { category: 'ratings', chainParam: 'chainId' } },
      schema: {
        operationId: 'getVaultRating',
        summary: "Get one vault's rating",
        description:
          "One vault's credit rating: grade, score, its markets and diversification components, and the rating of " +
          'each allocation.',
        security: [{ bearerAuth: [] }],
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Vault contract address.') }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(VaultRatingRef),
          ...NOT_MODIFIED,
          ...errorResponses([
            'INVALID_PARAMETER',
            'CHAIN_FORBIDDEN',
            'VAULT_NOT_FOUND',
            ...AUTHENTICATED_ERRORS,
          ]),
        },
      },
    },
    async (request, reply) => {
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const set = ratingsOf(deps, model);
      const found = getVaultRating(model, set, request.params.chainId, request.params.address);
      return sendRatings(request, reply, model, set, nowMs, found, vaultRatingJson, { list: false });
    },
  );
}
