import { Type } from '@fastify/type-provider-typebox';
import { positionsAtRiskPage } from '../../../queries/risk.ts';
import { callerOf, type RouteDeps } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { ChainIdsParam, ProtocolParam, pageParams, requireMarketId } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { assemble, positionJson, sendAssembled } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { PositionAtRiskRef } from './schemas.ts';

const ACCESS = { category: 'risk', limitMax: 200 } as const;

export function registerPositionsAtRisk(app: Api, deps: RouteDeps): void {
  app.get(
    '/risk/positions-at-risk',
    {
      config: { access: ACCESS, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'positionsAtRisk',
        summary: 'Positions at risk',
        description:
          'Borrow positions whose health factor is below the threshold (liquidatable ones, below 1, included), ' +
          'ordered by health factor ascending, then borrowed USD descending. Positions without debt are never at risk. ' +
          'The whole set pages with `cursor`: the first page takes the set and its order as of its `meta.asOf`, and ' +
          'the pages of its `meta.nextCursor` come from that set (no position twice, none skipped, the figures as of ' +
          'that instant) for 10 minutes; after that the cursor is refused (400 INVALID_PARAMETER naming the time it ' +
          "expired). `meta.total` is the size of the set on every page; `limit` (capped by your tier's result cap) " +
          'bounds each page, not the set.',
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
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(PositionAtRiskRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const market = q.marketId === undefined ? undefined : requireMarketId(q.marketId, 'marketId');
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const build = async () => {
        const found = await positionsAtRiskPage(
          model,
          {
            healthFactorThreshold: q.healthFactorThreshold ?? 1.1,
            protocol: q.protocol,
            chainIds,
            market,
            minBorrowUsd: q.minBorrowUsd ?? 0,
            limit,
          },
          {
            snapshots: deps.pageSnapshots,
            nowMs,
            cursor: q.cursor,
            caller: callerOf(request).key.mode,
            json: (i) => model.risk.json(i, positionJson),
          },
        );
        return {
          items: found.items.map((i) => i.json),
          list: true,
          meta: dataMeta(request, model, nowMs, found, clamped),
        };
      };
      // First pages are kept whole (for their second, while the model stands): bots poll them.
      // A later page is read from its set each time (its cursor expires to the millisecond).
      const answer =
        q.cursor === undefined
          ? await deps.answers.answerAsync(request, model, nowMs, build)
          : assemble(await build());
      return sendAssembled(request, reply, answer);
    },
  );
}
