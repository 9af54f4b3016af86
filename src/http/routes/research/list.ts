import { Type } from '@fastify/type-provider-typebox';
import { listReports, type ReportSummary } from '../../../queries/research.ts';
import type { RouteDeps } from '../../context.ts';
import {
  ChainIdsParam,
  CursorParam,
  EndDateParam,
  LimitParam,
  ProtocolParam,
  parseDate,
  parseEndDate,
  StartDateParam,
} from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
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
            startDate: Type.Optional(StartDateParam),
            endDate: Type.Optional(EndDateParam),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            cursor: Type.Optional(CursorParam),
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
      const { nowMs, limit, chainIds, startMs, clamped, model } = dataRequest(request, q, deps);
      const toMs = parseEndDate(q.endDate, parseDate(q.startDate, 'startDate')) ?? nowMs + 1;
      // A day's report covers the day: one starting before startDate is out of the window.
      const found = await listReports(model, deps.history, {
        protocol: q.protocol,
        chainIds,
        fromMs: startMs ?? 0,
        toMs,
        cursor: q.cursor,
        limit,
      });
      return sendFound(request, reply, model, nowMs, found, summaryJson, { list: true, clamped });
    },
  );
}
