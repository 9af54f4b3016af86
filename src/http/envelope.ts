import type { FastifyRequest } from 'fastify';
import type { Clamped } from '../access/clamp.ts';
import { freshness, type ReadModel } from '../data/read-model.ts';
import type { Found } from '../queries/types.ts';

export interface Meta {
  latencyMs: number;
  freshness: 'live' | 'cached' | 'snapshot';
  source: string;
  clamped?: Clamped;
  total?: number;
}

/** Server time since the request arrived, in ms, to the microsecond. */
export function latencyMs(request: FastifyRequest): number {
  return Math.round((performance.now() - request.startedAt) * 1000) / 1000;
}

/**
 * Meta of a data answer (DECISIONS D11): freshness from the dataset's age; source from the
 * protocols of the items found, or of the query's scope when nothing was found; total when the
 * query counted; clamped as the access pipeline reported it for this request.
 */
export function dataMeta(
  request: FastifyRequest,
  model: ReadModel,
  nowMs: number,
  found: Pick<Found<unknown>, 'itemProtocols' | 'scopeProtocols' | 'total'>,
  clamped: Clamped | undefined,
): Meta {
  const protocols = new Set(found.itemProtocols);
  const source = (protocols.size > 0 ? [...protocols] : [...found.scopeProtocols]).sort().join(',');
  const meta: Meta = { latencyMs: 0, freshness: freshness(model.dataset, nowMs), source };
  if (clamped) meta.clamped = clamped;
  if (found.total !== undefined) meta.total = found.total;
  meta.latencyMs = latencyMs(request);
  return meta;
}
