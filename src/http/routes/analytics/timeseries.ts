import { Type } from '@fastify/type-provider-typebox';
import { DailyTotals, type TimeseriesPoint, timeseries } from '../../../queries/analytics.ts';
import type { RouteDeps } from '../../context.ts';
import { ChainIdsParam, ProtocolParam, pageParams, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { TimeseriesPointRef, TimeseriesPointSchema } from './schemas.ts';

const ACCESS = { category: 'analytics', limitMax: 10_000 } as const;
const pointJson = itemSerializer<TimeseriesPoint>(TimeseriesPointSchema);

export function registerAnalyticsTimeseries(app: Api, deps: RouteDeps): void {
  const daily = new DailyTotals(deps.history);
  // The days that can no longer change are read once the server is ready, in slices, so that
  // the first request does not read two years of history while other clients wait.
  app.addHook('onReady', async () => {
    const model = deps.data.peek ? deps.data.peek('live') : deps.data.get('live');
    if (!model?.stored) return;
    void daily.prepare(deps.clock.now(), model.dataset.version).catch((err: unknown) => {
      app.log.warn({ err }, 'reading the daily totals ahead failed: the first request reads them');
    });
  });
  app.get(
    '/analytics/timeseries',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'analyticsTimeseries',
        summary: 'Daily totals over time',
        description:
          "Per UTC day and protocol (or chain, `groupBy=chain`), from the stored history: the sum of the markets' supply and " +
          'borrow in their daily snapshots, utilization of the sums, and the liquidations of the day (count, debt repaid, ' +
          'collateral seized, bad debt; those with an amount of no known USD value counted apart, that amount left out of ' +
          'the sums). Date ascending, then protocol name or chain id. `startDate` is raised to your ' +
          "tier's history window (meta.clamped); `endDate` defaults to now. Page with `cursor`.",
        querystring: Type.Object(
          {
            groupBy: Type.Optional(
              Type.Unsafe<'protocol' | 'chain'>({
                type: 'string',
                enum: ['protocol', 'chain'],
                description: 'One point per day and protocol (default), or per day and chain.',
              }),
            ),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            ...TIME_WINDOW_PARAMS,
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(TimeseriesPointRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, chainIds, page, clamped, model } = timeWindowRequest(request, q, deps);
      const found = await timeseries(model, daily, nowMs, {
        groupBy: q.groupBy ?? 'protocol',
        protocol: q.protocol,
        chainIds,
        ...page,
      });
      return sendFound(request, reply, model, nowMs, found, pointJson, { list: true, clamped });
    },
  );
}
