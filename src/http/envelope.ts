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
  nextCursor?: string;
  asOf?: string;
  blocks?: Record<string, number>;
}

/** ISO time a model reflects, formatted once per value. */
const asOfText = new WeakMap<ReadModel, { ms: number; iso: string }>();

function asOfOf(model: ReadModel): string {
  let s = asOfText.get(model);
  if (s?.ms !== model.asOf) {
    s = { ms: model.asOf, iso: new Date(model.asOf).toISOString() };
    asOfText.set(model, s);
  }
  return s.iso;
}

/** Server time since the request arrived, in ms, to the microsecond. */
export function latencyMs(request: FastifyRequest): number {
  return Math.round((performance.now() - request.startedAt) * 1000) / 1000;
}

/**
 * Meta of a data answer (DECISIONS D11, D16): freshness and asOf from the refresh of the data's
 * source (one source today: the dataset; sandbox data is always a snapshot), blocks from the
 * chain sources' last blocks (absent for the sandbox); source from the
 * protocols of the items found, or of the query's scope when nothing was found; total when the
 * query counted; clamped as the access pipeline reported it for this request.
 */
export function dataMeta(
  request: FastifyRequest,
  model: ReadModel,
  nowMs: number,
  found: Pick<Found<unknown>, 'itemProtocols' | 'scopeProtocols' | 'total' | 'nextCursor'>,
  clamped: Clamped | undefined,
): Meta {
  const protocols = new Set(found.itemProtocols);
  const source = (protocols.size > 0 ? [...protocols] : [...found.scopeProtocols]).sort().join(',');
  const meta: Meta = { latencyMs: 0, freshness: freshness(model.dataset, nowMs), source };
  if (clamped) meta.clamped = clamped;
  if (found.total !== undefined) meta.total = found.total;
  if (found.nextCursor !== undefined) meta.nextCursor = found.nextCursor;
  meta.asOf = asOfOf(model);
  if (model.blocks) meta.blocks = model.blocks;
  meta.latencyMs = latencyMs(request);
  return meta;
}
