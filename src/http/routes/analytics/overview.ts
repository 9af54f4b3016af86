import { Type } from '@fastify/type-provider-typebox';
import { type OverviewView, overview } from '../../../queries/analytics.ts';
import type { RouteDeps } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { ChainIdsParam, ProtocolParam } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendAssembled } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { OverviewRef, OverviewSchema } from './schemas.ts';

const overviewJson = itemSerializer<OverviewView>(OverviewSchema);

export function registerAnalyticsOverview(app: Api, deps: RouteDeps): void {
  app.get(
    '/analytics/overview',
    {
      config: { access: { category: 'analytics' } },
      schema: {
        operationId: 'analyticsOverview',
        summary: 'Overview',
        description:
          'Now, in the chains in scope: markets, supply, borrow, utilization, positions, positions with debt, positions at ' +
          'risk (health factor below 1.1) and liquidatable (below 1) with the debt at risk; in total, by protocol and by chain ' +
          '(largest supply first). Utilization is borrow / supply of the sums.',
        querystring: Type.Object(
          { protocol: Type.Optional(ProtocolParam), chainIds: Type.Optional(ChainIdsParam) },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(OverviewRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, chainIds, clamped, model } = dataRequest(request, q, deps);
      return sendAssembled(
        request,
        reply,
        deps.answers.answer(request, model, nowMs, () => {
          const found = overview(model, { protocol: q.protocol, chainIds });
          return {
            items: found.items.map(overviewJson),
            list: false,
            meta: dataMeta(request, model, nowMs, found, clamped),
          };
        }),
      );
    },
  );
}
