import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadModel } from '../../../data/read-model.ts';
import type { Found } from '../../../queries/types.ts';
import type { RouteDeps } from '../../context.ts';
import { marketListAnswer, sendAssembled } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';

/**
 * The answer of a market list route (list, search): the markets `find` picks in the caller's
 * model and scope (tier-clamped chains and limit), from the answer cache while the data stands.
 */
export function sendMarketList(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: RouteDeps,
  q: { limit?: number | undefined; chainIds?: string | undefined },
  find: (model: ReadModel, scope: { chainIds: number[] | undefined; limit: number }) => Found<number>,
): FastifyReply {
  const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
  return sendAssembled(
    request,
    reply,
    deps.answers.answer(request, model, nowMs, () =>
      marketListAnswer(request, model, find(model, { chainIds, limit }), nowMs, clamped),
    ),
  );
}
