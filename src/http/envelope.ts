import type { FastifyRequest } from 'fastify';
import type { Clamped } from '../access/clamp.ts';
import { answerClock, freshness, type ReadModel } from '../data/read-model.ts';
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
  syncing?: Record<string, { throughBlock: number; toBlock: number }>;
}

/** ISO time a model reflects, formatted once per value. */
const asOfText = new WeakMap<ReadModel, { ms: number; iso: string }>();

function asOfOf(model: ReadModel, ms: number): string {
  let s = asOfText.get(model);
  if (s?.ms !== ms) {
    s = { ms, iso: new Date(ms).toISOString() };
    asOfText.set(model, s);
  }
  return s.iso;
}

/** The chains a request was scoped to (its `chainIds` as its tier allows), set when they are parsed. */
const scopedChains = new WeakMap<FastifyRequest, readonly number[]>();

export function setScopedChains(request: FastifyRequest, chains: readonly number[] | undefined): void {
  if (chains) scopedChains.set(request, chains);
}

/** Server time since the request arrived, in ms, to the microsecond. */
export function latencyMs(request: FastifyRequest): number {
  return Math.round((performance.now() - request.startedAt) * 1000) / 1000;
}

/**
 * Meta of a data answer (docs/decisions.md "Meta", "Freshness per source"): freshness, asOf and blocks from the sources behind
 * the answer's chains (one market's, else the chains it was scoped to, else every chain): the
 * refresh of the stalest of them and their last blocks (sandbox data is always a snapshot, at its
 * last tick, with no blocks); source from the
 * protocols of the items found, or of the query's scope when nothing was found; total when the
 * query counted; clamped as the access pipeline reported it for this request. Live data not read
 * yet (ReadModel.synced false) is `snapshot`, with neither asOf nor blocks. `syncing` names the
 * answer's chains whose sync is under way (what is served of them is partial).
 */
export function dataMeta(
  request: FastifyRequest,
  model: ReadModel,
  nowMs: number,
  found: Pick<
    Found<unknown>,
    'itemProtocols' | 'scopeProtocols' | 'chains' | 'total' | 'nextCursor' | 'asOfMs'
  >,
  clamped: Clamped | undefined,
): Meta {
  const protocols = new Set(found.itemProtocols);
  const source = (protocols.size > 0 ? [...protocols] : [...found.scopeProtocols]).sort().join(',');
  const chains = found.chains ?? scopedChains.get(request) ?? null;
  if (!model.synced) {
    // Live data of a sources file no pass has read yet: empty, and said so (no instant, no block).
    const meta: Meta = { latencyMs: 0, freshness: 'snapshot', source };
    if (clamped) meta.clamped = clamped;
    if (found.total !== undefined) meta.total = found.total;
    if (found.nextCursor !== undefined) meta.nextCursor = found.nextCursor;
    meta.latencyMs = latencyMs(request);
    return meta;
  }
  const clock = answerClock(model, chains);
  const meta: Meta = {
    latencyMs: 0,
    freshness: freshness({ kind: model.dataset.kind, refreshedAt: clock.refreshedAt }, nowMs),
    source,
  };
  if (clamped) meta.clamped = clamped;
  if (found.total !== undefined) meta.total = found.total;
  if (found.nextCursor !== undefined) meta.nextCursor = found.nextCursor;
  // A sandbox's asOf is its last tick; real data's the refresh of the stalest source behind it.
  meta.asOf =
    found.asOfMs !== undefined
      ? new Date(found.asOfMs).toISOString()
      : asOfOf(model, model.dataset.kind === 'sandbox' || chains === null ? model.asOf : clock.refreshedAt);
  if (clock.blocks) meta.blocks = clock.blocks;
  if (clock.syncing) meta.syncing = clock.syncing;
  meta.latencyMs = latencyMs(request);
  return meta;
}
