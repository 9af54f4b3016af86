import { Type } from '@fastify/type-provider-typebox';
import { getVaultRating } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { AddressParam, ChainIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { VaultRatingRef } from './schemas.ts';
import { ratingsOf, sendRatings, vaultRatingJson } from './shared.ts';

export function registerVaultRatingDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/vaults/:chainId/:address',
    {
      config: { access: { category: 'ratings', chainParam: 'chainId' }, errors: ['VAULT_NOT_FOUND'] },
      schema: {
        operationId: 'getVaultRating',
        summary: "Get one vault's rating",
        description:
          "One vault's credit rating: grade, score, its markets and diversification components, and the rating of " +
          'each allocation.',
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Vault contract address.') }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(VaultRatingRef),
          ...NOT_MODIFIED,
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
