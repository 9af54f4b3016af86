import { Type } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from 'typebox';
import { PROTOCOLS } from '../domain/enums.ts';
import { ERROR_STATUS, type ErrorCode } from './errors.ts';

/**
 * The building blocks every area's schemas share: nullable values, addresses, USD amounts, the
 * envelope and its meta, the response headers, the error body and the error responses. An
 * area's own schemas are beside its routes (`routes/<area>/schemas.ts`). One schema feeds request
 * validation, response serialization (fast-json-stringify) and the OpenAPI document. Nullable
 * primitives use `type: [T, 'null']` rather than anyOf so the serializer stays on its fast path.
 */

type Primitive = 'string' | 'number' | 'integer' | 'boolean';
export function nullable<T>(type: Primitive, description: string, example?: unknown) {
  return Type.Unsafe<T | null>({
    type: [type, 'null'],
    description,
    ...(example !== undefined ? { examples: [example] } : {}),
  });
}

export const ProtocolSchema = Type.Unsafe<(typeof PROTOCOLS)[number]>({
  type: 'string',
  enum: [...PROTOCOLS],
  description: 'Lending protocol identifier.',
});

export const ADDRESS = Type.String({ pattern: '^0x[0-9a-f]{40}$', description: 'Lower-case 0x address.' });
export const USD = (description: string) =>
  Type.Number({ description: `${description}, USD (to the cent).` });
/** A USD amount some market may not have (no USD price of its loan token): null, never 0. */
export const UsdOrNull = (description: string, whenNull: string) =>
  nullable<number>(
    'number',
    `${description}, USD (to the cent); null when ${whenNull} has no USD price (never 0: the amount is unknown, not nothing).`,
  );
export const NullableNumber = (description: string) => nullable<number>('number', description);

const ClampSchema = Type.Object({ requested: Type.Unknown(), applied: Type.Unknown() });

export const MetaSchema = Type.Object({
  latencyMs: Type.Number({ description: 'Server time from receipt to serialization, ms.' }),
  freshness: Type.Unsafe<string>({
    type: 'string',
    enum: ['live', 'cached', 'snapshot'],
    description:
      '`live` (<= 60 s old), `cached` (<= 15 min) or `snapshot` (older, sandbox data, or live data no source of which has been read yet: the answer is then empty and has no `asOf`).',
  }),
  source: Type.String({
    description: 'Protocols of the returned items, sorted, comma-joined.',
    examples: ['aave,morpho'],
  }),
  clamped: Type.Optional(
    Type.Object(
      {
        limit: Type.Optional(ClampSchema),
        chainIds: Type.Optional(ClampSchema),
        startDate: Type.Optional(ClampSchema),
      },
      { description: 'Present when a tier clamp changed the request.' },
    ),
  ),
  total: Type.Optional(Type.Integer({ description: 'Items in scope before limit and offset (lists only).' })),
  nextCursor: Type.Optional(
    Type.String({
      description:
        'Lists paged by cursor: pass it as `cursor` to get the next page (same parameters otherwise). Absent on the last page.',
    }),
  ),
  asOf: Type.Optional(
    Type.String({
      description:
        'ISO 8601 UTC time of the last successful refresh of the stalest source behind the answer (data routes; ' +
        'for the living sandbox, the instant of its last simulation tick; absent while no source has been read yet).',
      examples: ['2026-11-24T12:00:00.000Z'],
    }),
  ),
  blocks: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Integer({ minimum: 0 }), {
      description:
        "Chain data: the block each chain's data reflects, by chain id (the lowest last block of the sources " +
        'reporting that chain). Absent for the sandbox.',
      examples: [{ '1': 21_000_000, '8453': 23_000_000 }],
    }),
  ),
  syncing: Type.Optional(
    Type.Record(
      Type.String({ pattern: '^[0-9]+$' }),
      Type.Object({ throughBlock: Type.Integer({ minimum: 0 }), toBlock: Type.Integer({ minimum: 0 }) }),
      {
        description:
          'Chains still syncing, by chain id: served are the accounts named by logs through `throughBlock`, ' +
          'read at `toBlock`; later ones are missing. Absent once synced.',
        examples: [{ '1': { throughBlock: 19_500_000, toBlock: 23_900_000 } }],
      },
    ),
  ),
});

// ---- response headers, documented on the responses that carry them ---------------------------

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ type, description });

/** On every answer. */
export const REQUEST_ID_HEADER = {
  'X-Request-Id': header(
    'Id of this request: the X-Request-Id you sent (1-128 of [A-Za-z0-9._:-]) or the trace id of your traceparent, else ours.',
  ),
};

/** On every answer to a request that reached the rate limiter (not on 401). */
export const RATE_HEADERS = {
  'X-RateLimit-Limit': header('Requests allowed per second (the per-second window).', 'integer'),
  'X-RateLimit-Remaining': header('Requests left in the window after this one.', 'integer'),
  'X-RateLimit-Reset': header('Unix ms when the oldest request in the window leaves it.', 'integer'),
  'RateLimit-Policy': header(
    'Every policy that applies (the per-second window; on a counted request also the daily and the monthly quota, a month counted as 30 days), e.g. `"per-second";q=20;w=1, "daily";q=10000;w=86400, "monthly";q=300000;w=2592000`.',
  ),
  RateLimit: header('The policy closest to exhaustion, e.g. `"daily";r=9000;t=43200`.'),
};

/** On data answers (200 and 304), docs/decisions.md "Compression and caching". */
export const CACHE_HEADERS = {
  ETag: header(
    'Strong tag of the data in the answer, one per content-coding (`"…-br"`, `"…-gzip"` for compressed bodies); send it back in If-None-Match to get 304 while unchanged (any coding\'s tag revalidates).',
  ),
  'Cache-Control': header(
    '`private, max-age=0, must-revalidate` on data; `no-store` on errors and client answers.',
  ),
};

const RETRY_AFTER_HEADER = { 'Retry-After': header('Seconds to wait before retrying.', 'integer') };
const AUTHENTICATE_HEADER = {
  'WWW-Authenticate': header('`Bearer`: the scheme a key is sent with (RFC 6750).'),
};

/** The headers of a data route's 200. */
export const DATA_HEADERS = { ...REQUEST_ID_HEADER, ...RATE_HEADERS, ...CACHE_HEADERS };
/** The headers of a client route's success. */
export const CLIENT_HEADERS = {
  ...REQUEST_ID_HEADER,
  ...RATE_HEADERS,
  'Cache-Control': CACHE_HEADERS['Cache-Control'],
};

/**
 * A reference to the schema an area names `name` (its `schemas`, registered once and listed in
 * components.schemas), typed as `schema`: routes answer it by reference, and generated clients
 * get a named type.
 */
export function ref<T extends TSchema>(name: string, _schema: T) {
  return Type.Unsafe<Static<T>>({ $ref: `${name}#` });
}

export const MetaRef = ref('Meta', MetaSchema);

export function envelope<T extends TSchema>(
  data: T,
  description = 'The data, and meta: how fresh it is, where it comes from, what was clamped.',
) {
  return { ...Type.Object({ data, meta: MetaRef }), description, headers: DATA_HEADERS };
}

const ERROR_EXAMPLES: Record<ErrorCode, Record<string, unknown>> = {
  INVALID_PARAMETER: {
    error: 'INVALID_PARAMETER',
    message: "Invalid parameter 'limit': must be an integer >= 1",
    details: [{ parameter: 'limit', problem: 'must be an integer >= 1' }],
  },
  UNAUTHORIZED: {
    error: 'UNAUTHORIZED',
    message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
  },
  TIER_FORBIDDEN: {
    error: 'TIER_FORBIDDEN',
    message: "The free tier does not include the 'risk' endpoints.",
    tier: 'free',
    category: 'risk',
  },
  CHAIN_FORBIDDEN: {
    error: 'CHAIN_FORBIDDEN',
    message: 'The free tier does not include chain 8453.',
    tier: 'free',
    chainId: 8453,
  },
  KEY_LIMIT_REACHED: {
    error: 'KEY_LIMIT_REACHED',
    message:
      'Your account holds 2 active Free live keys, the most the tier allows (2); revoke one to create another.',
    tier: 'free',
    limit: 2,
  },
  WEBHOOK_LIMIT_REACHED: {
    error: 'WEBHOOK_LIMIT_REACHED',
    message:
      'Your account holds 10 live webhooks, the most the Pro tier allows (10); delete one to create another.',
    tier: 'pro',
    limit: 10,
  },
  STREAM_LIMIT_REACHED: {
    error: 'STREAM_LIMIT_REACHED',
    message: 'This key holds 2 event streams open, the most the Pro tier allows (2); retry after one closes.',
    tier: 'pro',
    limit: 2,
    retryAfter: 5,
  },
  KEY_CREATION_RATE_EXCEEDED: {
    error: 'KEY_CREATION_RATE_EXCEEDED',
    message:
      'Your account created 5 live keys in the last 24 hours, the most the Free tier allows (5); retry after 3600 s.',
    limit: 5,
    retryAfter: 3599.5,
  },
  NOT_FOUND: { error: 'NOT_FOUND', message: 'No route GET /api/v1/nothing.' },
  MARKET_NOT_FOUND: { error: 'MARKET_NOT_FOUND', message: "No market 'morpho-1-0xabc'." },
  TOKEN_NOT_FOUND: {
    error: 'TOKEN_NOT_FOUND',
    message: 'No token 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  ORACLE_NOT_FOUND: {
    error: 'ORACLE_NOT_FOUND',
    message: 'No oracle 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  VAULT_NOT_FOUND: {
    error: 'VAULT_NOT_FOUND',
    message: 'No vault 0x0000000000000000000000000000000000000001 on chain 1.',
  },
  REPORT_NOT_FOUND: {
    error: 'REPORT_NOT_FOUND',
    message: "No research report '2026-01-01-morpho'.",
  },
  KEY_NOT_FOUND: { error: 'KEY_NOT_FOUND', message: "No API key 'key_abc' on this account." },
  WEBHOOK_NOT_FOUND: { error: 'WEBHOOK_NOT_FOUND', message: "No webhook 'wh_abc' on this account." },
  METHOD_NOT_ALLOWED: {
    error: 'METHOD_NOT_ALLOWED',
    message: 'PUT is not allowed on /api/v1/markets; use GET, HEAD, OPTIONS.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    error: 'IDEMPOTENCY_KEY_IN_USE',
    message: 'A request with this Idempotency-Key is still under way; retry after 1 s.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    error: 'IDEMPOTENCY_KEY_REUSED',
    message:
      'This Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request.',
  },
  PAYLOAD_TOO_LARGE: { error: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large.' },
  REQUEST_TIMEOUT: { error: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' },
  HEADERS_TOO_LARGE: {
    error: 'HEADERS_TOO_LARGE',
    message: 'The request headers are too large (16 KB at most).',
  },
  UNSUPPORTED_MEDIA_TYPE: { error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json.' },
  RATE_LIMIT_EXCEEDED: {
    error: 'RATE_LIMIT_EXCEEDED',
    message: 'Rate limit of 5 requests per second exceeded; retry after 0.412 s',
    retryAfter: 0.412,
  },
  DAILY_QUOTA_EXCEEDED: {
    error: 'DAILY_QUOTA_EXCEEDED',
    message: 'Daily quota of 1000 requests exceeded; it resets at 00:00 UTC.',
    limit: 1000,
    used: 1001,
  },
  MONTHLY_QUOTA_EXCEEDED: {
    error: 'MONTHLY_QUOTA_EXCEEDED',
    message: 'Monthly quota of 10000 requests exceeded; it resets on the 1st at 00:00 UTC.',
    limit: 10000,
    used: 10001,
  },
  INTERNAL_ERROR: { error: 'INTERNAL_ERROR', message: 'An unexpected error occurred. Request id: req-1a2b' },
  SERVICE_UNAVAILABLE: {
    error: 'SERVICE_UNAVAILABLE',
    message: 'The service is shutting down; retry shortly.',
  },
};

/** The error body schema: `{ error, message, ...extra }` (docs/decisions.md "Errors"). */
export const ErrorSchema = Type.Object(
  {
    error: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Machine-readable error code.',
    }),
    message: Type.String({ description: 'Human-readable explanation.' }),
    details: Type.Optional(
      Type.Array(Type.Object({ parameter: Type.String(), problem: Type.String() }), {
        description: 'INVALID_PARAMETER: each offending parameter.',
      }),
    ),
    retryAfter: Type.Optional(
      Type.Number({
        description: 'RATE_LIMIT_EXCEEDED, KEY_CREATION_RATE_EXCEEDED: seconds to wait, to the ms.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ description: 'Quota errors: the quota. Key limits: the most the tier allows.' }),
    ),
    used: Type.Optional(Type.Integer({ description: 'Quota errors: requests counted, greater than limit.' })),
    tier: Type.Optional(Type.String()),
    category: Type.Optional(Type.String()),
    chainId: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

/** The text of a status, as node:http names it. */
const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** What a status of the error vocabulary means, for its description. */
const STATUS_MEANING: Partial<Record<number, string>> = {
  405: 'The path exists, but not with this method (answered before authentication); `Allow` lists the methods it has.',
  408: 'The request (headers and body) did not arrive in time; the connection is closed.',
  429: 'Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry.',
  431: 'The request headers are over 16 KB; the connection is closed.',
  503: 'Overloaded, shutting down, or a backend briefly unavailable: retry after `Retry-After` seconds.',
};

const ALLOW_HEADER = { Allow: header('The methods the path has, e.g. `GET, OPTIONS`.') };

/** Example of a request without a valid key refused for its address's anonymous budget. */
const ANONYMOUS_EXAMPLE = {
  error: 'RATE_LIMIT_EXCEEDED',
  message: 'Too many requests without an API key from this address; retry after 1 s.',
  retryAfter: 1,
};

/** Error responses of a route, grouped by status, with an example of each code. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of new Set(codes)) {
    const s = ERROR_STATUS[c];
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) {
    const examples: Record<string, unknown> = Object.fromEntries(
      list.map((c) => [c, { value: ERROR_EXAMPLES[c] }]),
    );
    // Any request without a valid key may be refused for its address's budget.
    if (status === 429) examples.ANONYMOUS = { summary: 'Without a valid key', value: ANONYMOUS_EXAMPLE };
    const meaning = STATUS_MEANING[status];
    out[status] = {
      description: `${REASON[status] ?? 'Error'}: ${list.map((c) => `\`${c}\``).join(' or ')}.${meaning ? ` ${meaning}` : ''}`,
      // The named Error schema, with one example per code.
      content: { 'application/json': { schema: { $ref: 'Error#' }, examples } },
      headers: {
        ...REQUEST_ID_HEADER,
        // Every error but a missing or wrong key passed the rate limiter first.
        ...(status === 401 ? AUTHENTICATE_HEADER : RATE_HEADERS),
        'Cache-Control': CACHE_HEADERS['Cache-Control'],
        ...(status === 429 || status === 503 || status === 409 ? RETRY_AFTER_HEADER : {}),
        ...(status === 405 ? ALLOW_HEADER : {}),
      },
    };
  }
  return out;
}

/** A data route's answer when the client's If-None-Match still matches. */
export const NOT_MODIFIED = {
  304: {
    ...Type.Null({
      description:
        'Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request.',
    }),
    headers: DATA_HEADERS,
  },
};

/** The shared schemas named in components.schemas, besides the areas' own (routes/areas.ts). */
export const SHARED_SCHEMAS = { Meta: MetaSchema, Error: ErrorSchema };
