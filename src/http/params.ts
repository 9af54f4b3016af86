import { Type } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type ClampedScope, clampScope, DEFAULT_LIMIT } from '../access/clamp.ts';
import { PROTOCOLS, type Protocol } from '../domain/enums.ts';
import { MARKET_ID_PROBLEM, type MarketId, parseMarketId } from '../domain/market-id.ts';
import { callerOf } from './context.ts';
import { setScopedChains } from './envelope.ts';
import { invalidParameter } from './errors.ts';

export { type MarketId, parseMarketId } from '../domain/market-id.ts';

export function requireMarketId(raw: string | undefined, parameter: string): MarketId {
  const id = parseMarketId(raw);
  if (!id) {
    throw invalidParameter([
      {
        parameter,
        problem: MARKET_ID_PROBLEM,
      },
    ]);
  }
  return id;
}

export function parseChainIds(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((s) => Number(s.trim()));
}

// Shared query parameter schemas (documented once, reused by every route that takes them).
export const LimitParam = (max: number) =>
  Type.Integer({
    minimum: 1,
    description: `Maximum results (default ${DEFAULT_LIMIT}). Values above min(${max}, the tier's result cap) are lowered silently and reported in meta.clamped.`,
    examples: [DEFAULT_LIMIT],
  });

export const ProtocolParam = Type.Unsafe<Protocol>({
  type: 'string',
  enum: [...PROTOCOLS],
  description: 'Only markets of this protocol.',
});

/** A market's uniqueKey in a path (matched case-insensitively; its chain is checked against the tier). */
export const MarketIdPath = Type.String({
  maxLength: 256,
  description: 'Market uniqueKey: `<protocol>-<chainId>-<identifier>`.',
  examples: ['morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc'],
});

export const ChainIdsParam = Type.String({
  pattern: '^ *[0-9]{1,12}( *, *[0-9]{1,12})* *$',
  maxLength: 500,
  description:
    "Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.",
  examples: ['1,8453'],
});

const CursorParam = Type.String({
  maxLength: 1024,
  description: 'Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged).',
});

/** A wallet or contract address in a path or query: 0x and 40 hex digits, any case. */
export const AddressParam = (description: string) =>
  Type.String({
    pattern: '^0x[0-9a-fA-F]{40}$',
    description,
    examples: ['0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0'],
  });

/** The chain id of a path (/tokens/{chainId}/{address}): also what the chain access check reads. */
export const ChainIdPath = Type.Integer({
  minimum: 0,
  maximum: 999_999_999_999,
  description: 'Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.',
  examples: [1],
});

const EndDateParam = Type.String({
  pattern:
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$',
  description:
    'ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.',
  examples: ['2026-11-20'],
});

export const StartDateParam = Type.String({
  pattern:
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$',
  description: "ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.",
  examples: ['2026-11-01'],
});

/**
 * The query parameters of a time window of history, `startDate` and `endDate`: read by
 * `timeWindowRequest` (routes/data-request.ts).
 */
export const TIME_WINDOW_PARAMS = {
  startDate: Type.Optional(StartDateParam),
  endDate: Type.Optional(EndDateParam),
};

/** The query parameters of a list paged by cursor (keyset): `limit`, at most `limitMax`, and `cursor`. */
export function pageParams(limitMax: number) {
  return { limit: Type.Optional(LimitParam(limitMax)), cursor: Type.Optional(CursorParam) };
}

/**
 * Parses an ISO 8601 date or date-time to epoch ms; undefined when omitted. Without an offset
 * the time is UTC (never the server's zone); a date that does not exist (2026-02-30) is refused.
 */
export function parseDate(raw: string | undefined, parameter: string): number | undefined {
  if (raw === undefined) return undefined;
  const hasOffset = /(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : hasOffset ? raw : `${raw}Z`;
  const ms = Date.parse(iso);
  // The calendar date must survive the round trip (Date.parse rolls 02-30 over to 03-02).
  const sameDay =
    Number.isFinite(ms) && (hasOffset || new Date(ms).toISOString().slice(0, 10) === raw.slice(0, 10));
  if (!sameDay)
    throw invalidParameter([{ parameter, problem: 'must be an existing ISO 8601 date or date-time' }]);
  return ms;
}

/**
 * Applies the tier clamps of docs/decisions.md "Clamping" to a request's `limit` (up to the route's own maximum,
 * from its access declaration), `chainIds` and `startDate`; `clamped` says what changed (the
 * handler passes it to the envelope as meta.clamped).
 */
export function clampRequest(
  request: FastifyRequest,
  q: { limit?: number | undefined; chainIds?: string | undefined; startDate?: string | undefined },
  nowMs: number,
): ClampedScope {
  const { tier } = callerOf(request);
  // Every route taking `limit` declares its maximum (checked when routes are registered).
  const routeMax = request.routeOptions.config.access?.limitMax ?? DEFAULT_LIMIT;
  const scope = {
    limit: q.limit,
    chainIds: parseChainIds(q.chainIds),
    startMs: parseDate(q.startDate, 'startDate'),
  };
  const clamped = clampScope(scope, routeMax, tier, nowMs);
  // The answer's freshness is that of these chains' sources (docs/decisions.md "Freshness per source").
  setScopedChains(request, clamped.chainIds);
  return clamped;
}

/**
 * The end of a time range (exclusive, epoch ms) from `endDate`: a date includes its whole UTC
 * day, a date-time is included to the ms. Undefined when omitted. 400 when before `startMs`.
 */
export function parseEndDate(raw: string | undefined, startMs: number | undefined): number | undefined {
  const at = parseDate(raw, 'endDate');
  if (at === undefined || raw === undefined) return undefined;
  const end = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? at + 86_400_000 : at + 1;
  if (startMs !== undefined && end <= startMs)
    throw invalidParameter([{ parameter: 'endDate', problem: 'must not be before startDate' }]);
  return end;
}
