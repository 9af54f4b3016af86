import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { canonicalJson } from '../access/idempotency.ts';
import type { Tier } from '../access/tiers.ts';
import { freshnessKey, type ReadModel } from '../data/read-model.ts';
import { callerOf } from './context.ts';
import { type Assembled, assemble, type DataAnswer } from './serialize.ts';

/** Bytes of answers a process keeps (bodies and keys). */
export const ANSWER_CACHE_BYTES = 64 * 1024 * 1024;

interface Entry extends Assembled {
  /** The model's revision and the second of the clock the answer was computed at. */
  revision: number;
  sec: number;
  bytes: number;
}

/**
 * Whole answers of the data routes bots poll (market detail, search and list, positions at
 * risk), so that a repeated request costs a lookup and a write while the data behind it stands.
 *
 * Keyed by everything that shapes an answer: the route, its path and query parameters
 * (normalized: as validated and coerced, as JSON with names in order), the caller's scope (key mode, which
 * picks the data, and the tier's result cap, chains and history window, which clamp it), the
 * read model, and the answer's freshness label. An entry is used only while the model's
 * revision and the second of the clock are those it was computed at: a source update, a
 * simulation tick or the next second of oracle age computes it again, so no answer is older
 * than its data. Bounded by bytes (least recently used first out).
 */
export class AnswerCache {
  readonly #lru: LRUCache<string, Entry>;
  readonly #models = new WeakMap<ReadModel, number>();
  readonly #scopes = new WeakMap<Tier, string>();
  #nextModel = 1;

  constructor(maxBytes = ANSWER_CACHE_BYTES) {
    this.#lru = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (e, key) => e.bytes + key.length,
    });
  }

  /** The answer of this request from the cache, or `build`'s, kept for the next. */
  answer(request: FastifyRequest, model: ReadModel, nowMs: number, build: () => DataAnswer): Assembled {
    const key = this.#keyOf(request, model, nowMs);
    return this.#hit(key, model, nowMs) ?? this.#keep(key, model, nowMs, build());
  }

  /** answer() for an answer built asynchronously (one that reads the shared page snapshots). */
  async answerAsync(
    request: FastifyRequest,
    model: ReadModel,
    nowMs: number,
    build: () => Promise<DataAnswer>,
  ): Promise<Assembled> {
    const key = this.#keyOf(request, model, nowMs);
    const hit = this.#hit(key, model, nowMs);
    if (hit) return hit;
    // Read before the build: the model may move while it waits, and the answer is of this one.
    const revision = model.revision;
    const answer = await build();
    return this.#keep(key, model, nowMs, answer, revision);
  }

  #hit(key: string, model: ReadModel, nowMs: number): Entry | undefined {
    const hit = this.#lru.get(key);
    return hit !== undefined && hit.revision === model.revision && hit.sec === Math.floor(nowMs / 1000)
      ? hit
      : undefined;
  }

  #keep(key: string, model: ReadModel, nowMs: number, answer: DataAnswer, revision = model.revision): Entry {
    const sec = Math.floor(nowMs / 1000);
    const a = assemble(answer);
    const before = Buffer.concat(a.before);
    const entry: Entry = {
      before: [before],
      after: a.after,
      etag: a.etag,
      revision,
      sec,
      bytes: before.length + a.after.length + 64,
    };
    this.#lru.set(key, entry);
    return entry;
  }

  get size(): number {
    return this.#lru.size;
  }

  #keyOf(request: FastifyRequest, model: ReadModel, nowMs: number): string {
    let id = this.#models.get(model);
    if (id === undefined) {
      id = this.#nextModel++;
      this.#models.set(model, id);
    }
    const { key, tier } = callerOf(request);
    let scope = this.#scopes.get(tier);
    if (scope === undefined) {
      scope = `${tier.id}|${tier.resultCap}|${tier.chains?.join(',') ?? '*'}|${tier.historyDays}`;
      this.#scopes.set(tier, scope);
    }
    return `${request.routeOptions.url}\n${canonicalJson(request.params)}\n${canonicalJson(request.query)}\n${key.mode}|${scope}\n${id}|${freshnessKey(model, nowMs)}`;
  }
}
