import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { dataMeta } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { ChainIdsParam, clampRequest, LimitParam, ProtocolParam, requireMarketId } from '../params.ts';
import { envelope, errorResponses, PositionAtRiskSchema } from '../schemas.ts';
import { JSON_TYPE, listEnvelope, positionJson } from '../serialize.ts';
import { type Api, AUTHENTICATED_ERRORS } from './types.ts';

const ROUTE_MAX = 200;

export function registerPositionsAtRisk(app: Api, deps: AppDeps): void {
  app.get(
    '/risk/positions-at-risk',
    {
      config: { access: { category: 'risk', limitMax: ROUTE_MAX } },
      schema: {
        operationId: 'positionsAtRisk',
        tags: ['Risk'],
        summary: 'Positions at risk',
        description:
          'Borrow positions whose health factor is below the threshold (liquidatable ones, below 1, included), ' +
          'ordered by health factor ascending, then borrowed USD descending. Positions without debt are never at risk.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          {
            healthFactorThreshold: Type.Optional(
              Type.Number({
                exclusiveMinimum: 0,
                maximum: 10,
                description: 'Positions with healthFactor below this value (default 1.1; 0 < x <= 10).',
                examples: [1.1],
              }),
            ),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            marketId: Type.Optional(
              Type.String({ maxLength: 256, description: 'Only positions in this market (uniqueKey).' }),
            ),
            minBorrowUsd: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 1e15,
                description: 'Minimum borrowed USD (default 0).',
                examples: [10000],
              }),
            ),
            limit: Type.Optional(LimitParam(ROUTE_MAX)),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(PositionAtRiskSchema)),
          ...errorResponses(['INVALID_PARAMETER', 'MARKET_NOT_FOUND', ...AUTHENTICATED_ERRORS]),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const marketId = q.marketId === undefined ? undefined : requireMarketId(q.marketId, 'marketId');
      const nowMs = deps.clock.now();
      const { limit, chainIds } = clampRequest(request, q, nowMs);
      const model = deps.data.get(callerOf(request).key.mode);
      let marketOrd: number | undefined;
      if (marketId) {
        marketOrd = model.catalog.ordOf(marketId.key);
        if (marketOrd === undefined) throw new ApiError('MARKET_NOT_FOUND', `No market '${marketId.key}'.`);
      }
      const hits = model.risk.query({
        healthFactorThreshold: q.healthFactorThreshold ?? 1.1,
        protocol: q.protocol,
        chainIds,
        marketOrd,
        minBorrowUsd: q.minBorrowUsd ?? 0,
        limit,
      });
      const items = hits.map((i) => model.risk.json(i, positionJson));
      const scope = marketId
        ? [marketId.protocol]
        : model.catalog.protocolsIn({ protocol: q.protocol, chainIds });
      const protocols = hits.map((i) => model.risk.protocolOf(i));
      const meta = dataMeta(request, model, nowMs, protocols, scope);
      return reply.type(JSON_TYPE).send(listEnvelope(items, meta) as never);
    },
  );
}
