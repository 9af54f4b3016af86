import { Type } from '@fastify/type-provider-typebox';
import { marketHistory, type SnapshotView } from '../../../queries/history.ts';
import type { AppDeps } from '../../context.ts';
import { MarketIdPath, pageParams, requireMarketId, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { MarketHistoryPointRef, MarketHistoryPointSchema } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 1000, chainParam: 'marketId' } as const;
const pointJson = itemSerializer<SnapshotView>(MarketHistoryPointSchema);
/** Hourly points are kept for the last 30 days. */
export const HOURLY_WINDOW_MS = 30 * 86_400_000;

export function registerMarketHistory(app: Api, deps: AppDeps): void {
  app.get(
    '/markets/:marketId/history',
    {
      config: { access: ACCESS, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'getMarketHistory',
        summary: 'Market history',
        description:
          "A market's state over time, oldest first: supply, borrow, utilization, APYs and prices, one point per UTC day " +
          "(00:00), or per hour with `interval=hour` (the last 30 days). `startDate` is raised to your tier's history " +
          'window and, hourly, to 30 days ago (meta.clamped); `endDate` defaults to now. Page with `cursor`.',
        params: Type.Object({
          marketId: MarketIdPath,
        }),
        querystring: Type.Object(
          {
            interval: Type.Optional(
              Type.Unsafe<'day' | 'hour'>({
                type: 'string',
                enum: ['day', 'hour'],
                description: 'Point spacing (default day).',
              }),
            ),
            ...TIME_WINDOW_PARAMS,
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(MarketHistoryPointRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const id = requireMarketId(request.params.marketId, 'marketId');
      const interval = q.interval ?? 'day';
      const { nowMs, requestedStartMs, page, clamped, model } = timeWindowRequest(request, q, deps);
      let fromMs = page.fromMs;
      let report = clamped;
      if (interval === 'hour' && fromMs < nowMs - HOURLY_WINDOW_MS) {
        const floor = nowMs - HOURLY_WINDOW_MS;
        if (requestedStartMs !== undefined) {
          report = {
            ...clamped,
            startDate: {
              requested: new Date(requestedStartMs).toISOString(),
              applied: new Date(floor).toISOString(),
            },
          };
        }
        fromMs = floor;
      }
      const found = await marketHistory(model, deps.history, { key: id.key, interval, ...page, fromMs });
      return sendFound(request, reply, model, nowMs, found, pointJson, { list: true, clamped: report });
    },
  );
}
