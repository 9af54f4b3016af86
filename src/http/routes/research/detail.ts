import { Type } from '@fastify/type-provider-typebox';
import { type ResearchReport, reportMarkdown } from '../../../domain/research.ts';
import { getReport } from '../../../queries/research.ts';
import type { RouteDeps } from '../../context.ts';
import { ChainIdsParam } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { ResearchReportRef, ResearchReportSchema } from './schemas.ts';

const reportJson = itemSerializer<ResearchReport & { markdown: string }>(ResearchReportSchema);

export function registerResearchReport(app: Api, deps: RouteDeps): void {
  app.get(
    '/research/reports/:id',
    {
      config: { access: { category: 'research' }, errors: ['REPORT_NOT_FOUND'] },
      schema: {
        operationId: 'getResearchReport',
        summary: 'One research report',
        description:
          'One daily digest, as structured JSON and as Markdown (`markdown`), narrowed to the chains in your scope: per ' +
          'chain supply, borrow, utilization and its change, liquidations and bad debt; utilization spikes; notable ' +
          'liquidations; rating changes; and, for the day just ended, the largest positions near liquidation and the ' +
          "stale oracles. A report none of whose chains is in your scope, or of a day before your tier's history window, is " +
          'not found.',
        params: Type.Object({
          id: Type.String({
            maxLength: 64,
            description: '`<YYYY-MM-DD>-<protocol>`.',
            examples: ['2026-11-24-morpho'],
          }),
        }),
        querystring: Type.Object({ chainIds: Type.Optional(ChainIdsParam) }, { additionalProperties: false }),
        response: {
          200: envelope(ResearchReportRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const { nowMs, chainIds, startMs, clamped, model } = dataRequest(request, request.query, deps);
      const found = await getReport(model, deps.history, request.params.id, chainIds, startMs);
      return sendFound(
        request,
        reply,
        model,
        nowMs,
        found,
        (r) => reportJson({ ...r, markdown: reportMarkdown(r) }),
        { list: false, clamped },
      );
    },
  );
}
