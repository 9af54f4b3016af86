import { hash, randomBytes } from 'node:crypto';
import { PAGE_SNAPSHOT_TTL_MS, type PageSnapshots, type SnapshotItem } from '../data/page-snapshots.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

export interface PositionsAtRiskParams extends Scope {
  /** Positions with healthFactor strictly below this (0 < x <= 10). */
  healthFactorThreshold: number;
  /** Only positions of this market (uniqueKey, lower-case), of protocol `marketProtocol`. */
  market?: { key: string; protocol: Protocol } | undefined;
  minBorrowUsd: number;
  limit: number;
}

/**
 * Borrow positions below the health factor threshold, by health factor ascending, then borrowed
 * USD descending. Items are risk index positions; MARKET_NOT_FOUND for an unknown market.
 */
export function positionsAtRisk(model: ReadModel, p: PositionsAtRiskParams): Found<number> {
  let marketOrd: number | undefined;
  if (p.market) {
    marketOrd = model.catalog.ordOf(p.market.key);
    if (marketOrd === undefined) throw QueryError.marketNotFound(p.market.key);
  }
  const hits = model.risk.query({
    healthFactorThreshold: p.healthFactorThreshold,
    protocol: p.protocol,
    chainIds: p.chainIds,
    marketOrd,
    minBorrowUsd: p.minBorrowUsd,
    limit: p.limit,
  });
  const scopeProtocols = p.market
    ? [p.market.protocol]
    : model.catalog.protocolsIn({ protocol: p.protocol, chainIds: p.chainIds });
  return {
    items: hits,
    itemProtocols: hits.map((i) => model.risk.protocolOf(i)),
    scopeProtocols,
  };
}

/** The list name cursors of positions at risk carry. */
const LIST = 'positions-at-risk';

/** How a page of positions at risk is cut, and where the set of a paged answer is kept. */
export interface AtRiskPaging {
  snapshots: PageSnapshots;
  /** The instant of the request (epoch ms): cursors expire PAGE_SNAPSHOT_TTL_MS after their first page. */
  nowMs: number;
  /** `meta.nextCursor` of a previous page; absent for a first page. */
  cursor?: string | undefined;
  /**
   * Who asks, beyond the query's own parameters (the key's mode and the tier's chains): a
   * cursor serves only the caller scope and query its first page answered.
   */
  caller: string;
  /** A position's served JSON (risk index position). */
  json(i: number): Uint8Array;
}

/** A page of the paged set: its items' JSON, and the instant the set was fixed at (meta.asOf). */
export type AtRiskPage = Found<SnapshotItem> & { asOfMs: number };

/**
 * A page of the whole set of positions at risk. A first page takes the set at the model's
 * asOf: when it holds more than `limit` positions, the set (each position's served JSON, in
 * order) is kept in `snapshots` and the page carries a cursor; a later page is read from that
 * set, so that prices moving between pages neither repeat nor skip a position. A cursor
 * serves PAGE_SNAPSHOT_TTL_MS from its first page; past that, or with other parameters than
 * its first page's, it is refused as an invalid `cursor` (the message says which). `total`
 * is the size of the set on every page.
 */
export async function positionsAtRiskPage(
  model: ReadModel,
  p: PositionsAtRiskParams,
  paging: AtRiskPaging,
): Promise<AtRiskPage> {
  const scope = queryScope(model, p, paging.caller);
  const scopeProtocols = p.market
    ? [p.market.protocol]
    : model.catalog.protocolsIn({ protocol: p.protocol, chainIds: p.chainIds });
  const cursor = decodeCursor(paging.cursor, LIST, ['string', 'number', 'number']);
  if (cursor !== undefined) {
    const [id, offset, expiresAtMs] = cursor;
    // The cursor's own expiry (the instant its set was taken + 10 minutes) is the one named; the
    // snapshot, shared by the first pages of its second, outlives every cursor it handed out.
    if (paging.nowMs >= expiresAtMs || offset < 0) throw expired(expiresAtMs);
    const header = await paging.snapshots.header(id);
    if (!header || paging.nowMs >= header.expiresAtMs) throw expired(expiresAtMs);
    if (header.scope !== scope)
      throw QueryError.invalid(
        'cursor',
        'belongs to a query with other parameters: pass the parameters of its first page unchanged',
      );
    const items = await paging.snapshots.items(id, offset, p.limit);
    if (!items) throw expired(expiresAtMs);
    const next = offset + items.length;
    return {
      items,
      itemProtocols: items.map((i) => i.protocol),
      scopeProtocols,
      total: header.total,
      asOfMs: header.asOfMs,
      ...(next < header.total ? { nextCursor: encodeCursor(LIST, [id, next, expiresAtMs]) } : {}),
    };
  }
  const taken = await takeSet(model, p, paging, scope);
  // From the instant the set was taken: the first pages sharing it give the same cursor, so the
  // same answer (the answer cache serves it again within its second).
  const expiresAtMs = Math.ceil(taken.takenAtMs) + PAGE_SNAPSHOT_TTL_MS;
  const items = taken.set.slice(0, p.limit);
  return {
    items,
    itemProtocols: items.length > 0 ? items.map((i) => i.protocol) : [],
    scopeProtocols,
    total: taken.set.length,
    asOfMs: taken.asOfMs,
    ...(taken.id !== null ? { nextCursor: encodeCursor(LIST, [taken.id, items.length, expiresAtMs]) } : {}),
  };
}

/** A set taken by a first page: its items, the instant of its model, its snapshot id (null: kept nowhere). */
interface TakenSet {
  set: SnapshotItem[];
  asOfMs: number;
  id: string | null;
  revision: number;
  takenAtMs: number;
}

/**
 * How long a taken set serves further first pages of the same query while the model is
 * unchanged (ms), as the answer cache serves an answer for its second: polling clients do not
 * each write a snapshot. Its snapshot is kept this much longer than PAGE_SNAPSHOT_TTL_MS, so
 * that every cursor handed out gets its full 10 minutes.
 */
const REUSE_MS = 1000;

const takenSets = new WeakMap<ReadModel, Map<string, TakenSet>>();

/**
 * The set of a first page: the one taken for the same query in the last second of an unchanged
 * model, else taken now, and when it is larger than the page, kept in the snapshots before
 * the page is answered.
 */
async function takeSet(
  model: ReadModel,
  p: PositionsAtRiskParams,
  paging: AtRiskPaging,
  scope: string,
): Promise<TakenSet> {
  let byScope = takenSets.get(model);
  if (!byScope) {
    byScope = new Map();
    takenSets.set(model, byScope);
  }
  const memo = byScope.get(scope);
  const fresh = (t: TakenSet | undefined): t is TakenSet =>
    t !== undefined &&
    t.revision === model.revision &&
    paging.nowMs >= t.takenAtMs &&
    paging.nowMs < t.takenAtMs + REUSE_MS &&
    (t.id !== null || t.set.length <= p.limit);
  if (fresh(memo)) return memo;
  const all = positionsAtRisk(model, { ...p, limit: Number.POSITIVE_INFINITY });
  const set = all.items.map((i) => ({ protocol: model.risk.protocolOf(i), json: paging.json(i) }));
  const taken: TakenSet = {
    set,
    asOfMs: model.asOf,
    id: null,
    revision: model.revision,
    takenAtMs: paging.nowMs,
  };
  if (set.length > p.limit) {
    const id = randomBytes(12).toString('base64url');
    const expiresAtMs = Math.ceil(paging.nowMs) + PAGE_SNAPSHOT_TTL_MS + REUSE_MS;
    await paging.snapshots.put(id, { scope, asOfMs: taken.asOfMs, expiresAtMs, total: set.length }, set);
    taken.id = id;
  }
  // Bounded: one set per query scope, replaced as the model moves.
  if (byScope.size >= 64) byScope.clear();
  byScope.set(scope, taken);
  return taken;
}

function expired(expiresAtMs: number): QueryError {
  return QueryError.invalid(
    'cursor',
    `expired at ${new Date(expiresAtMs).toISOString()} (a cursor of positions at risk serves ` +
      `${PAGE_SNAPSHOT_TTL_MS / 60_000} minutes from its first page): request the first page again`,
  );
}

/** The query a cursor belongs to: its parameters but `limit`, the caller's scope and the dataset. */
function queryScope(model: ReadModel, p: PositionsAtRiskParams, caller: string): string {
  const d = model.dataset;
  const text = JSON.stringify([
    caller,
    d.kind,
    d.profile,
    p.healthFactorThreshold,
    p.protocol ?? null,
    p.chainIds ? [...new Set(p.chainIds)].sort((a, b) => a - b) : null,
    p.market?.key ?? null,
    p.minBorrowUsd,
  ]);
  return hash('sha256', text, 'base64url');
}
