import type { FastifyRequest } from 'fastify';
import { freshness, type ReadModel } from '../data/read-model.ts';

export interface Meta {
  latencyMs: number;
  freshness: 'live' | 'cached' | 'snapshot';
  source: string;
  clamped?: FastifyRequest['clamped'];
  total?: number;
}

/** Server time since the request arrived, in ms, to the microsecond. */
export function latencyMs(request: FastifyRequest): number {
  return Math.round((performance.now() - request.startedAt) * 1000) / 1000;
}

/**
 * Meta of a data answer (DECISIONS D11): freshness from the dataset's age, source from the
 * protocols of the returned items, or of the query's scope when nothing was returned.
 */
export function dataMeta(
  request: FastifyRequest,
  model: ReadModel,
  nowMs: number,
  itemProtocols: Iterable<string>,
  scopeProtocols: readonly string[],
): Meta {
  const protocols = new Set(itemProtocols);
  const source = (protocols.size > 0 ? [...protocols].sort() : [...scopeProtocols].sort()).join(',');
  const meta: Meta = { latencyMs: 0, freshness: freshness(model.dataset, nowMs), source };
  if (request.clamped) meta.clamped = request.clamped;
  meta.latencyMs = latencyMs(request);
  return meta;
}
