import { Type } from '@fastify/type-provider-typebox';
import { listReports, type ReportSummary } from '../../../queries/research.ts';
import type { RouteDeps } from '../../context.ts';
import { ChainIdsParam, ProtocolParam, pageParams, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { ResearchReportSummaryRef, ResearchReportSummarySchema } from './schemas.ts';

const ACCESS = { category: 'research', limitMax: 500 } as const;
const summaryJson = itemSerializer<ReportSummary>(ResearchReportSummarySchema);

export function registerResearchReports(app: Api, deps: RouteDeps): void {
  app.get(
    '/research/reports',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listResearchReports',
        summary: 'Research reports',
        description:
          'The daily risk digests, one per UTC day and protocol, newest first: written by a scheduled job once the day is ' +
          'over, from its stored history (utilization spikes, notable liquidations, rating changes; positions near ' +
          'liquidation and stale oracles for the day just ended). Each is narrowed to the chains in your scope; ' +
          "`startDate` is raised to your tier's history window. Page with `cursor`.",
        querystring: Type.Object(
          {
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            ...TIME_WINDOW_PARAMS,
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(ResearchReportSummaryRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, chainIds, page, clamped, model } = timeWindowRequest(request, q, deps);
      // A day's report covers the day: one starting before startDate is out of the window.
      const found = await listReports(model, deps.history, { protocol: q.protocol, chainIds, ...page });
      return sendFound(request, reply, model, nowMs, found, summaryJson, { list: true, clamped });
    },
  );
}
