import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { invalidParameter } from '../errors.ts';
import { ChainIdsParam, clampRequest, LimitParam, ProtocolParam } from '../params.ts';
import { envelope, errorResponses, MarketSchema } from '../schemas.ts';
import { JSON_TYPE, marketListAnswer } from '../serialize.ts';
import { type Api, AUTHENTICATED_ERRORS } from './types.ts';

const ROUTE_MAX = 200;

export function registerMarketsSearch(app: Api, deps: AppDeps): void {
  app.get(
    '/markets/search',
    {
      config: { access: { category: 'core', limitMax: ROUTE_MAX } },
      schema: {
        operationId: 'searchMarkets',
        tags: ['Markets'],
        summary: 'Search markets',
        description:
          'Keyword search over collateral and loan symbols and names, market label, vault symbol and the pair notation ' +
          '`COLLATERAL/LOAN`. Every term must match (AND); a term matches a word by prefix, or anywhere in it. ' +
          'Ranking: exact symbol, then prefix, then substring; ties by supply, largest first.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          {
            query: Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'Search text, 1 to 100 characters after trimming.',
              examples: ['wstETH/WETH'],
            }),
            limit: Type.Optional(LimitParam(ROUTE_MAX)),
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
      const text = q.query.trim();
      if (text.length < 1 || text.length > 100) {
        throw invalidParameter([
          { parameter: 'query', problem: 'must be 1 to 100 characters after trimming' },
        ]);
      }
      const nowMs = deps.clock.now();
      const { limit, chainIds } = clampRequest(request, q, nowMs);
      const model = deps.data.get(callerOf(request).key.mode);
      const filter = { protocol: q.protocol, chainIds };
      const ords = model.catalog.search(text, filter, limit);
      return reply.type(JSON_TYPE).send(marketListAnswer(request, model, ords, nowMs, filter) as never);
    },
  );
}
