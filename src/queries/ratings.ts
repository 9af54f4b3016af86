import type { MarketRatingView, RatingSet, VaultRatingView } from '../data/ratings.ts';
import { orderScore, vaultKey } from '../data/ratings.ts';
import type { ReadModel } from '../data/read-model.ts';
import { points } from '../domain/precision.ts';
import type { RatedGrade } from '../domain/rating.ts';
import type { RatingChange, RatingChangeCursor, RatingSubjectKind } from '../domain/records/history.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

/**
 * Credit ratings: the latest ratings the ratings job computed for the caller's model (a
 * RatingSet, src/data/ratings.ts) filtered, ordered by score and paged by cursor, and the
 * rating changes recorded in the store. The ratings themselves are never computed here.
 */

/** What the ratings queries read: the latest ratings of a model, and the recorded changes (no writes). */
export interface RatingsReader {
  /** Assets (USD) below which a market or vault is not graded (the methodology's sizeFloorUsd). */
  readonly sizeFloorUsd?: number;
  /** The latest ratings of `model`; null until the job has rated it. */
  ratingsOf(model: ReadModel): RatingSet | null;
  ratingChanges(
    kind: RatingSubjectKind,
    subject: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: RatingChangeCursor,
  ): Promise<RatingChange[]>;
}

export type RatingOrder = 'desc' | 'asc';

export interface RatingFilter {
  chainIds?: readonly number[] | undefined;
  /** Only ratings with at least this score. */
  minScore?: number | undefined;
  grade?: RatedGrade | undefined;
  /** `desc` (default): best first; `asc`: worst first. */
  order?: RatingOrder | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** A score as the integer a cursor carries (scores have 2 decimals). */
const cents = (score: number) => Math.round(score * 100);

/**
 * Keyset page of `items` (ordered best first: score descending, key ascending), walked in
 * `order`: the items `keep` keeps strictly after the cursor's (score, key), at most `limit`,
 * and how many it keeps in all.
 */
function scorePage<T>(
  list: string,
  items: readonly T[],
  keep: (x: T) => boolean,
  key: (x: T) => string,
  score: (x: T) => number,
  order: RatingOrder,
  cursor: string | undefined,
  limit: number,
): { items: T[]; total: number; nextCursor?: string } {
  const name = `${list}:${order}`;
  const after = decodeCursor(cursor, name, ['number', 'string']);
  // In `desc`, after (s, k) means a lower score, or the same and a greater key; `asc` reverses both.
  const isAfter = (x: T) => {
    if (!after) return true;
    const [s, k] = after;
    const c = cents(score(x));
    if (c !== s) return order === 'desc' ? c < s : c > s;
    return order === 'desc' ? key(x) > k : key(x) < k;
  };
  const out: T[] = [];
  let total = 0;
  let more = false;
  const n = items.length;
  for (let i = 0; i < n; i++) {
    const x = items[order === 'desc' ? i : n - 1 - i];
    if (x === undefined || !keep(x)) continue;
    total++;
    if (!isAfter(x)) continue;
    if (out.length < limit) out.push(x);
    else more = true;
  }
  const last = out.at(-1);
  return {
    items: out,
    total,
    ...(more && last ? { nextCursor: encodeCursor(name, [cents(score(last)), key(last)]) } : {}),
  };
}

function scoreFilter(p: RatingFilter) {
  return (x: { score: number | null; grade: RatedGrade; chainId: number }) =>
    (p.chainIds === undefined || p.chainIds.includes(x.chainId)) &&
    (p.minScore === undefined || (x.score !== null && x.score >= p.minScore)) &&
    (p.grade === undefined || x.grade === p.grade);
}

/** Markets' ratings in scope, best first (or worst first), paged by cursor; total = ratings matching. */
export function listMarketRatings(
  model: ReadModel,
  set: RatingSet,
  p: RatingFilter & Pick<Scope, 'protocol'>,
): Found<MarketRatingView> {
  const inScope = scoreFilter(p);
  const page = scorePage(
    'ratings:markets',
    set.markets,
    (m) => (p.protocol === undefined || m.protocol === p.protocol) && inScope(m),
    (m) => m.marketId,
    orderScore,
    p.order ?? 'desc',
    p.cursor,
    p.limit,
  );
  return {
    items: page.items,
    itemProtocols: page.items.map((m) => m.protocol),
    scopeProtocols: model.catalog.protocolsIn({ protocol: p.protocol, chainIds: p.chainIds }),
    total: page.total,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** One market's rating; MARKET_NOT_FOUND when the model has no such market. */
export function getMarketRating(model: ReadModel, set: RatingSet, key: string): Found<MarketRatingView> {
  const i = model.catalog.ordOf(key) === undefined ? undefined : set.marketIndex.get(key);
  const rating = i === undefined ? undefined : set.markets[i];
  if (!rating) throw QueryError.marketNotFound(key);
  return { items: [rating], itemProtocols: [rating.protocol], scopeProtocols: [rating.protocol] };
}

/** Vaults' ratings in scope, best first (or worst first), paged by cursor; total = ratings matching. */
export function listVaultRatings(
  model: ReadModel,
  set: RatingSet,
  p: RatingFilter & { protocol?: 'morpho' | 'euler' | undefined; asset?: string | undefined },
): Found<VaultRatingView> {
  const inScope = scoreFilter(p);
  const asset = p.asset?.trim().toUpperCase();
  const page = scorePage(
    'ratings:vaults',
    set.vaults,
    (v) =>
      (p.protocol === undefined || v.protocol === p.protocol) &&
      (asset === undefined || v.asset.toUpperCase() === asset) &&
      inScope(v),
    (v) => vaultKey(v.chainId, v.address),
    orderScore,
    p.order ?? 'desc',
    p.cursor,
    p.limit,
  );
  const scope = p.protocol
    ? [p.protocol]
    : (['euler', 'morpho'] as const).filter((x) => model.catalog.protocols.includes(x));
  return {
    items: page.items,
    itemProtocols: page.items.map((v) => v.protocol),
    scopeProtocols: scope,
    total: page.total,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** One vault's rating; VAULT_NOT_FOUND when the model has no vault at that address on that chain. */
export function getVaultRating(
  model: ReadModel,
  set: RatingSet,
  chainId: number,
  address: string,
): Found<VaultRatingView> {
  const i = model.vaults.get(chainId, address) ? set.vaultIndex.get(vaultKey(chainId, address)) : undefined;
  const rating = i === undefined ? undefined : set.vaults[i];
  if (!rating) throw QueryError.notFound('vault', chainId, address.toLowerCase());
  return { items: [rating], itemProtocols: [rating.protocol], scopeProtocols: [rating.protocol] };
}

export interface RatingChangeView {
  /** ISO 8601 UTC. */
  at: string;
  grade: string;
  /** Null when not graded (grade NR). */
  score: number | null;
  /** Why it was not graded; null when graded. */
  reason: string | null;
  previousGrade: string | null;
  previousScore: number | null;
  methodologyVersion: string;
  components: Record<string, number>;
}

/** Whose rating history: a market by uniqueKey (lower-case), or a vault by chain and address. */
export type RatingSubject =
  | { kind: 'market'; key: string }
  | { kind: 'vault'; chainId: number; address: string };

export interface RatingHistoryParams {
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

/**
 * A market's or vault's recorded rating changes in [fromMs, toMs), oldest first, paged by
 * cursor. MARKET_NOT_FOUND / VAULT_NOT_FOUND when the model has no such subject; empty for a
 * model whose history is not the store's (like market history).
 */
export async function ratingHistory(
  model: ReadModel,
  reader: Pick<RatingsReader, 'ratingChanges'>,
  subject: RatingSubject,
  p: RatingHistoryParams,
): Promise<Found<RatingChangeView>> {
  let key: string;
  let protocol: string;
  if (subject.kind === 'market') {
    const ord = model.catalog.ordOf(subject.key);
    if (ord === undefined) throw QueryError.marketNotFound(subject.key);
    key = subject.key;
    protocol = model.catalog.recordAt(ord).protocol;
  } else {
    const vault = model.vaults.get(subject.chainId, subject.address);
    if (!vault) throw QueryError.notFound('vault', subject.chainId, subject.address.toLowerCase());
    key = vaultKey(subject.chainId, subject.address);
    protocol = vault.record.protocol;
  }
  const list = `ratings-history:${subject.kind}`;
  const after = decodeCursor(p.cursor, list, ['number']);
  const fromMs = Math.floor(p.fromMs);
  const toMs = Math.ceil(p.toMs);
  const rows =
    model.stored && fromMs < toMs
      ? await reader.ratingChanges(
          subject.kind,
          key,
          fromMs,
          toMs,
          p.limit + 1,
          after ? { at: after[0] } : undefined,
        )
      : [];
  const page = rows.slice(0, p.limit);
  const last = page.at(-1);
  return {
    items: page.map((r) => ({
      at: new Date(r.at).toISOString(),
      grade: r.grade,
      score: r.score === null ? null : points(r.score),
      reason: r.reason,
      previousGrade: r.previousGrade,
      previousScore: r.previousScore === null ? null : points(r.previousScore),
      methodologyVersion: r.methodology,
      components: Object.fromEntries(Object.entries(r.components).map(([k, v]) => [k, points(v)])),
    })),
    itemProtocols: page.length > 0 ? [protocol] : [],
    scopeProtocols: [protocol],
    ...(last && rows.length > p.limit ? { nextCursor: encodeCursor(list, [last.at]) } : {}),
  };
}
