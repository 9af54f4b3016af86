import { Type } from '@fastify/type-provider-typebox';
import { listTokens, type TokenView } from '../../../queries/assets.ts';
import type { AppDeps } from '../../context.ts';
import { ChainIdsParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { TokenRef, TokenSchema } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 1000 } as const;
const tokenJson = itemSerializer<TokenView>(TokenSchema);

export function registerTokensList(app: Api, deps: AppDeps): void {
  app.get(
    '/tokens',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listTokens',
        summary: 'List tokens',
        description:
          'Tokens the markets hold as collateral or lend, by chain id then address (an order no data change moves; page with `cursor`), ' +
          'with their USD price and its source, and the supply and borrow of the markets that lend them. `meta.total`: tokens in scope.',
        querystring: Type.Object(
          {
            chainIds: Type.Optional(ChainIdsParam),
            symbol: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 64,
                description: 'Only tokens with this symbol (case-insensitive).',
                examples: ['USDC'],
              }),
            ),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(TokenRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const found = listTokens(model, { chainIds, symbol: q.symbol, cursor: q.cursor, limit }, nowMs);
      return sendFound(request, reply, model, nowMs, found, tokenJson, { list: true, clamped });
    },
  );
}
