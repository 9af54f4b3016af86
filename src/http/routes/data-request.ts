import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clamped } from '../../access/clamp.ts';
import type { ReadModel } from '../../data/read-model.ts';
import type { Found } from '../../queries/types.ts';
import type { AppDeps, RouteDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { dataMeta } from '../envelope.ts';
import { clampRequest, parseDate, parseEndDate, requireMarketId } from '../params.ts';
import { type Item, sendAssembled } from '../serialize.ts';

/**
 * The parse step every data list route shares: the instant the answer reflects, the tier-clamped
 * `limit`, `chainIds` and `startDate` with what was clamped, and the caller's read model (the
 * sandbox for test keys, "Keys and accounts" (docs/decisions.md)).
 */
export function dataRequest(
  request: FastifyRequest,
  q: { limit?: number | undefined; chainIds?: string | undefined; startDate?: string | undefined },
  deps: Pick<AppDeps, 'clock' | 'data'>,
): {
  nowMs: number;
  limit: number;
  chainIds: number[] | undefined;
  startMs: number | undefined;
  clamped: Clamped | undefined;
  model: ReadModel;
} {
  const nowMs = deps.clock.now();
  return { nowMs, ...clampRequest(request, q, nowMs), model: deps.data.get(callerOf(request).key.mode) };
}

/**
 * The parse step of a route reading a time window of history page by page (TIME_WINDOW_PARAMS
 * and pageParams): dataRequest's, the `startDate` asked for (before the tier's clamp) and the
 * end of `endDate` (exclusive: a date includes its whole UTC day; undefined when omitted), and
 * the page to read: from the clamped start (0 when omitted) to that end (just after now when
 * omitted), from `cursor`, `limit` items.
 */
export function timeWindowRequest(
  request: FastifyRequest,
  q: {
    limit?: number | undefined;
    chainIds?: string | undefined;
    startDate?: string | undefined;
    endDate?: string | undefined;
    cursor?: string | undefined;
  },
  deps: Pick<AppDeps, 'clock' | 'data'>,
) {
  const parsed = dataRequest(request, q, deps);
  const requestedStartMs = parseDate(q.startDate, 'startDate');
  const endMs = parseEndDate(q.endDate, requestedStartMs);
  return {
    ...parsed,
    requestedStartMs,
    endMs,
    page: {
      fromMs: parsed.startMs ?? 0,
      toMs: endMs ?? parsed.nowMs + 1,
      cursor: q.cursor,
      limit: parsed.limit,
    },
  };
}

/**
 * The answer of a route about the one market its path names (`marketId`): the id checked, the
 * caller's model, the query run and its item serialized through the answer cache (valid while
 * the model and the clock second are unchanged), with the meta of what the query found.
 */
export function sendMarketAnswer<T>(
  request: FastifyRequest<{ Params: { marketId: string } }>,
  reply: FastifyReply,
  deps: RouteDeps,
  query: (model: ReadModel, key: string, nowSec: number) => Found<T>,
  json: (item: T, model: ReadModel, nowSec: number) => Item,
): FastifyReply {
  const id = requireMarketId(request.params.marketId, 'marketId');
  const nowMs = deps.clock.now();
  const nowSec = Math.floor(nowMs / 1000);
  const model = deps.data.get(callerOf(request).key.mode);
  return sendAssembled(
    request,
    reply,
    deps.answers.answer(request, model, nowMs, () => {
      const found = query(model, id.key, nowSec);
      return {
        items: found.items.map((item) => json(item, model, nowSec)),
        list: false,
        // About the market's chain (docs/decisions.md "Freshness per source"), whatever the query knew of it.
        meta: dataMeta(request, model, nowMs, { ...found, chains: [id.chainId] }, undefined),
      };
    }),
  );
}
