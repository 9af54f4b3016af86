import type { FastifyRequest } from 'fastify';
import type { Clamped } from '../../access/clamp.ts';
import type { ReadModel } from '../../data/read-model.ts';
import type { AppDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { clampRequest } from '../params.ts';

/**
 * The parse step every data list route shares: the instant the answer reflects, the tier-clamped
 * `limit`, `chainIds` and `startDate` with what was clamped, and the caller's read model (the
 * sandbox for test keys, D10).
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
