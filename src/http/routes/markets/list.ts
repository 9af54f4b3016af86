import { Type } from '@fastify/type-provider-typebox';
import { listMarkets } from '../../../queries/markets.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ChainIdsParam, clampRequest, LimitParam, ProtocolParam } from '../../params.ts';
import { envelope, errorResponses, MarketSchema } from '../../schemas.ts';
import { JSON_TYPE, marketListAnswer } from '../../serialize.ts';
import { type Api, AUTHENTICATED_ERRORS } from '../types.ts';

const ACCESS = { category: 'core', limitMax: 1000 } as const;

export function registerMarketsList(app: Api, deps: AppDeps): void {
  app.get(
    '/markets',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listMarkets',
        tags: ['Markets'],
        summary: 'List markets',
        description:
          'Markets sorted by total supply (USD), largest first. Page with `offset`; `meta.total` is the number of markets in scope.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          {
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            offset: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: 10_000_000,
                description: 'Markets to skip (default 0).',
                examples: [0],
              }),
            ),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(MarketSchema)),
          ...errorResponses(['INVALID_PARAMETER', ...AUTHENTICATED_ERRORS]),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const nowMs = deps.clock.now();
      const { limit, chainIds, clamped } = clampRequest(request, q, nowMs);
      const model = deps.data.get(callerOf(request).key.mode);
      const found = listMarkets(model, { protocol: q.protocol, chainIds, offset: q.offset ?? 0, limit });
      return reply.type(JSON_TYPE).send(marketListAnswer(request, model, found, nowMs, clamped) as never);
    },
  );
}
