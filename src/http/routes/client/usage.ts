import { Type } from '@fastify/type-provider-typebox';
import { clampStartDate } from '../../../access/clamp.ts';
import { DAY_MS, utcDay } from '../../../domain/periods.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { parseDate, StartDateParam } from '../../params.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { ACCESS, clientMeta } from './shared.ts';

export function registerUsage(app: Api, deps: AppDeps): void {
  app.get(
    '/client/usage',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getUsage',
        summary: 'Requests per UTC day and endpoint',
        description:
          "Counted requests of the calling key per UTC day and endpoint, from `startDate` (raised to the tier's history window) to today.",
        querystring: Type.Object(
          { startDate: Type.Optional(StartDateParam) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                date: Type.String({ description: 'UTC day, YYYY-MM-DD.' }),
                requests: Type.Integer(),
                endpoints: Type.Array(Type.Object({ endpoint: Type.String(), requests: Type.Integer() })),
              }),
            ),
            meta: MetaRef,
          }),
        },
      },
    },
    async (request) => {
      const { key, tier } = callerOf(request);
      const nowMs = deps.clock.now();
      const requested = parseDate(request.query.startDate, 'startDate');
      const start = clampStartDate(requested, tier, nowMs);
      const clamped = start.clamp ? { startDate: start.clamp } : undefined;
      // Unlimited history without a startDate: the last 365 days.
      const fromMs = start.applied ?? nowMs - 365 * DAY_MS;
      const rows = await deps.store.usageByDay(key.id, utcDay(fromMs), utcDay(nowMs));
      const days = new Map<
        string,
        { date: string; requests: number; endpoints: { endpoint: string; requests: number }[] }
      >();
      for (const r of rows) {
        let d = days.get(r.day);
        if (!d) {
          d = { date: r.day, requests: 0, endpoints: [] };
          days.set(r.day, d);
        }
        d.requests += r.requests;
        d.endpoints.push({ endpoint: r.endpoint, requests: r.requests });
      }
      return { data: [...days.values()], meta: clientMeta(request, clamped) };
    },
  );
}
