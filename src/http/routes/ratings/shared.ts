import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clamped } from '../../../access/clamp.ts';
import type { MarketRatingView, RatingSet, VaultRatingView } from '../../../data/ratings.ts';
import { freshness, type ReadModel } from '../../../data/read-model.ts';
import { GRADES, NOT_RATED, type RatedGrade } from '../../../domain/rating.ts';
import type { RatingChangeView, RatingOrder } from '../../../queries/ratings.ts';
import type { Found } from '../../../queries/types.ts';
import type { AppDeps } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { ApiError } from '../../errors.ts';
import { itemSerializer, sendData } from '../../serialize.ts';
import { MarketRatingSchema, RatingChangeSchema, VaultRatingSchema } from './schemas.ts';

/** What the ratings routes share: their parameters, the ratings of the caller's model, the answer. */

export const MinScoreParam = Type.Number({
  minimum: 0,
  maximum: 100,
  description: 'Only ratings scoring at least this (0 to 100).',
  examples: [70],
});

export const GradeParam = Type.Unsafe<RatedGrade>({
  type: 'string',
  enum: [...GRADES, NOT_RATED],
  description: 'Only ratings of this grade (NR: those not graded).',
});

export const OrderParam = Type.Unsafe<RatingOrder>({
  type: 'string',
  enum: ['desc', 'asc'],
  description: 'By score: `desc` (default) best first, `asc` worst first; ties by id. Page with `cursor`.',
});

/**
 * The latest ratings of `model`. Until the ratings job has rated it (the first seconds after a
 * start or a dataset change), 503 SERVICE_UNAVAILABLE with Retry-After: the routes never
 * compute ratings themselves.
 */
export function ratingsOf(deps: Pick<AppDeps, 'ratings'>, model: ReadModel): RatingSet {
  const set = deps.ratings.ratingsOf(model);
  if (set) return set;
  throw new ApiError(
    'SERVICE_UNAVAILABLE',
    'The ratings of this dataset are being computed; retry in a few seconds.',
    {},
    { 'retry-after': '5' },
  );
}

/** Each rating's JSON, serialized once per computed rating (a RatingSet's views never change). */
function cached<T extends object>(schema: object): (item: T) => Uint8Array {
  const json = itemSerializer<T>(schema);
  const bytes = new WeakMap<T, Uint8Array>();
  return (item) => {
    let b = bytes.get(item);
    if (!b) {
      b = json(item);
      bytes.set(item, b);
    }
    return b;
  };
}

export const marketRatingJson = cached<MarketRatingView>(MarketRatingSchema);
export const vaultRatingJson = cached<VaultRatingView>(VaultRatingSchema);
/** A recorded rating change (read from the store per request: not cached). */
export const ratingChangeJson = itemSerializer<RatingChangeView>(RatingChangeSchema);

/**
 * Sends ratings found in `set`: the usual envelope, with meta saying what the ratings reflect
 * (docs/decisions.md "Freshness per source"): asOf is the instant of the data they were computed from, and freshness that
 * data's age now, not the model's (ratings are recomputed daily, not with every price tick).
 */
export function sendRatings<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  model: ReadModel,
  set: RatingSet,
  nowMs: number,
  found: Found<T>,
  json: (item: T) => Uint8Array,
  options: { list: boolean; clamped?: Clamped | undefined },
): FastifyReply {
  const meta = dataMeta(request, model, nowMs, found, options.clamped);
  if (model.synced) {
    meta.freshness = freshness({ ...model.dataset, refreshedAt: set.dataAsOf }, nowMs);
    meta.asOf = new Date(set.dataAsOf).toISOString();
  }
  return sendData(request, reply, { items: found.items.map(json), list: options.list, meta });
}
