import { Type } from '@fastify/type-provider-typebox';
import { getToken, type TokenDetailView } from '../../../queries/assets.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { AddressParam, ChainIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import type { Api } from '../types.ts';
import { TokenDetailRef, TokenDetailSchema } from './schemas.ts';

const tokenJson = itemSerializer<TokenDetailView>(TokenDetailSchema);

export function registerTokenDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/tokens/:chainId/:address',
    {
      config: { access: { category: 'core', chainParam: 'chainId' }, errors: ['TOKEN_NOT_FOUND'] },
      schema: {
        operationId: 'getToken',
        summary: 'Get one token',
        description:
          'One token: its USD price and the source of it, the feeds on its chain that price it (with their freshness), ' +
          'and every market holding it as collateral or loan with its supply and borrow.',
        params: Type.Object({
          chainId: ChainIdPath,
          address: AddressParam('Token contract address.'),
        }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(TokenDetailRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const found = getToken(model, request.params.chainId, request.params.address, nowMs);
      return sendFound(request, reply, model, nowMs, found, tokenJson, { list: false });
    },
  );
}
