import { Type } from '@fastify/type-provider-typebox';
import { marketHistory, type SnapshotView } from '../../../queries/history.ts';
import type { AppDeps } from '../../context.ts';
import {
  CursorParam,
  EndDateParam,
  LimitParam,
  MarketIdPath,
  parseDate,
  parseEndDate,
  requireMarketId,
  StartDateParam,
} from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
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
            startDate: Type.Optional(StartDateParam),
            endDate: Type.Optional(EndDateParam),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            cursor: Type.Optional(CursorParam),
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
      const { nowMs, limit, startMs, clamped, model } = dataRequest(request, q, deps);
      const requestedStart = parseDate(q.startDate, 'startDate');
      const toMs = parseEndDate(q.endDate, requestedStart) ?? nowMs + 1;
      let fromMs = startMs ?? 0;
      let report = clamped;
      if (interval === 'hour' && fromMs < nowMs - HOURLY_WINDOW_MS) {
        const floor = nowMs - HOURLY_WINDOW_MS;
        if (requestedStart !== undefined) {
          report = {
            ...clamped,
            startDate: {
              requested: new Date(requestedStart).toISOString(),
              applied: new Date(floor).toISOString(),
            },
          };
        }
        fromMs = floor;
      }
      const found = await marketHistory(model, deps.history, {
        key: id.key,
        interval,
        fromMs,
        toMs,
        cursor: q.cursor,
        limit,
      });
      return sendFound(request, reply, model, nowMs, found, pointJson, { list: true, clamped: report });
    },
  );
}
