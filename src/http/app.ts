import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import underPressure from '@fastify/under-pressure';
import scalar from '@scalar/fastify-api-reference';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { BackendUnavailableError } from '../access/admission.ts';
import { accessHook } from './access-hook.ts';
import type { AppDeps, HealthReport, ServerOptions } from './context.ts';
import { ApiError, ERROR_STATUS, invalidParameter, type ParameterProblem } from './errors.ts';
import { registerClientRoutes } from './routes/client.ts';
import { registerMarketDetail } from './routes/market-detail.ts';
import { registerMarketsList } from './routes/markets-list.ts';
import { registerMarketsSearch } from './routes/markets-search.ts';
import { registerPositionsAtRisk } from './routes/positions-at-risk.ts';
import type { Api } from './routes/types.ts';

export const API_PREFIX = '/api/v1';
export const API_VERSION = '1.0.0';

/** Headers a browser client may read (CORS). */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
];

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns AJV errors into D6 details: one entry per parameter, in words a client can act on. */
function problemsOf(errors: readonly AjvError[], dataVar: string): ParameterProblem[] {
  const out = new Map<string, string>();
  for (const e of errors) {
    let parameter = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let problem = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      parameter = String(e.params.additionalProperty);
      problem = 'is not a known parameter';
    } else if (e.keyword === 'required') {
      parameter = String(e.params.missingProperty);
      problem = 'is required';
    } else if (e.keyword === 'enum') {
      problem = `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    } else if (e.keyword === 'type') {
      const type = String(e.params.type);
      problem = `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
    } else if (e.keyword === 'pattern') {
      problem = 'is not in the expected format';
    }
    if (!parameter) parameter = dataVar;
    if (!out.has(parameter)) out.set(parameter, problem);
  }
  return [...out].map(([parameter, problem]) => ({ parameter, problem }));
}

function sendError(reply: import('fastify').FastifyReply, err: ApiError): void {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  reply.code(err.status).send(err.body());
}

/**
 * Defaults against slow and greedy clients (slowloris, idle sockets) and overload. A slow client
 * is cut off by the headers and request timeouts, checked every connectionsCheckingIntervalMs
 * (Node's default of 30 s would let a slowloris hold a socket for up to 40 s).
 */
export const SERVER_DEFAULTS = {
  connectionTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxRequestsPerSocket: 0,
  pressure: {
    maxEventLoopDelayMs: 200,
    maxHeapUsedBytes: 0,
    maxRssBytes: 0,
    sampleIntervalMs: 1_000,
    retryAfterSeconds: 2,
  },
} as const;

/** Security headers on the raw answers below, which bypass Fastify's hooks. */
const RAW_HEADERS =
  'Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
  "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\nConnection: close\r\n";

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (malformed request line, bad
 * version, header without colon, NUL bytes, headers over 16 KB, too slow): a D6 body, then close.
 */
function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body: Record<string, unknown> = {
    error: 'INVALID_PARAMETER',
    message: 'Malformed HTTP request.',
    details: [{ parameter: 'request', problem: 'is not a valid HTTP/1.1 request' }],
  };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = { error: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' };
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { error: 'HEADERS_TOO_LARGE', message: 'The request headers are too large (16 KB at most).' };
  }
  this.log.debug({ code: err.code, status }, 'client error');
  if (socket.writable && socket.bytesWritten === 0) {
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${RAW_HEADERS}` +
        `X-Request-Id: req_${randomBytes(12).toString('base64url')}\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}

/** Anything shaped like an API key, in text we log (a key sent by mistake in the URL). */
const KEY_IN_TEXT = /lrds_(live|test)_[0-9a-z]+/gi;
const ASCII_ESCAPE = /%([0-7][0-9a-f])/gi;

/**
 * The URL with its ASCII percent-escapes decoded, three layers deep (`%256C` → `%6C` → `l`):
 * keys are ASCII, so this is enough to reveal one however it was spelled.
 */
function decodeAsciiEscapes(url: string): string {
  let s = url;
  for (let i = 0; i < 3 && s.includes('%'); i++) {
    const next = s.replace(ASCII_ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === s) break;
    s = next;
  }
  return s;
}

/** A URL as logged: when it holds something shaped like a key, however encoded, the key is masked. */
export function maskKeysInUrl(url: string): string {
  const decoded = decodeAsciiEscapes(url);
  KEY_IN_TEXT.lastIndex = 0;
  if (!KEY_IN_TEXT.test(decoded)) return url;
  return decoded.replace(KEY_IN_TEXT, (_, mode: string) => `lrds_${mode.toLowerCase()}_[redacted]`);
}

/** Fastify's request log fields, with any key in the URL masked. */
function maskedRequest(req: import('fastify').FastifyRequest) {
  return {
    method: req.method,
    url: maskKeysInUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * Security headers of every answer, the set helmet's defaults would send, fixed once: a JSON
 * API that nothing may frame or load (the docs page sets its own CSP). Set as one constant
 * object because applying helmet's middleware chain cost a tenth of the time of a request.
 */
const SECURITY_HEADERS = Object.freeze({
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'cross-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});

const REQUEST_ID_PREFIX = randomBytes(6).toString('base64url');
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * A request id the caller supplied and we can safely echo and log: `X-Request-Id` of 1 to 128
 * characters from [A-Za-z0-9._:-], or else the trace id of a valid W3C `traceparent` (not all
 * zeros). Anything else is ignored (never echoed: no header or log injection).
 */
export function incomingRequestId(headers: import('node:http').IncomingHttpHeaders): string | null {
  const id = headers['x-request-id'];
  // never one shaped like a key: it would be logged as it is
  if (typeof id === 'string' && VALID_REQUEST_ID.test(id) && !/lrds_(live|test)_/i.test(id)) return id;
  const tp = headers.traceparent;
  if (typeof tp === 'string') {
    const m = TRACEPARENT.exec(tp);
    if (m && !/^0+$/.test(m[1]!) && !tp.startsWith('ff')) return m[1]!;
  }
  return null;
}

/** The routes of the app by path pattern, to tell a wrong method on a known path (405) from an unknown path (404). */
function routeTable() {
  const byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();
  return {
    add(method: string | string[], url: string) {
      let entry = byPattern.get(url);
      if (!entry) {
        const source = url
          .split('/')
          .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        entry = { re: new RegExp(`^${source}$`), methods: new Set() };
        byPattern.set(url, entry);
      }
      for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m);
    },
    /** The methods some route accepts on this concrete path, sorted; empty when no route has the path. */
    methodsOf(path: string): string[] {
      const out = new Set<string>();
      for (const { re, methods } of byPattern.values())
        if (re.test(path)) for (const m of methods) out.add(m);
      if (out.size > 0) out.add('OPTIONS');
      return [...out].sort();
    },
  };
}
let requestSeq = 0;

/** Builds the whole HTTP app. Listening is the caller's business (src/cli/serve.ts). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const server: Required<Omit<ServerOptions, 'pressure'>> = { ...SERVER_DEFAULTS, ...deps.server };
  const headersTimeout = Math.min(server.headersTimeoutMs, server.requestTimeoutMs || Infinity);
  const app = Fastify({
    logger:
      deps.logger === false || deps.logger === undefined
        ? false
        : {
            ...(typeof deps.logger === 'object' ? deps.logger : {}),
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
            serializers: {
              req: maskedRequest,
              ...(typeof deps.logger === 'object' ? (deps.logger.serializers as object) : {}),
            },
          },
    // The caller's own id when it sends a valid one (X-Request-Id, else the trace id of a W3C
    // traceparent), so its logs and ours can be joined; otherwise a random prefix per process and
    // a counter: unique across instances, and no CSPRNG call per request.
    genReqId: (req) =>
      incomingRequestId(req.headers) ?? `req_${REQUEST_ID_PREFIX}${(requestSeq++).toString(36)}`,
    bodyLimit: 16 * 1024,
    connectionTimeout: server.connectionTimeoutMs,
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    maxRequestsPerSocket: server.maxRequestsPerSocket,
    http: {
      headersTimeout,
      requestTimeout: server.requestTimeoutMs,
      connectionsCheckingInterval: server.connectionsCheckingIntervalMs,
    },
    // Our own 503 (below) has the D6 body; Fastify's has not.
    return503OnClosing: false,
    clientErrorHandler,
    // Routing failures (bad percent-encoding in the path, a path segment over maxParamLength).
    frameworkErrors: (error, request, reply) => {
      // Hooks do not run for these: set what the hooks would have set.
      reply.header('x-request-id', request.id);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
      reply.header('access-control-allow-origin', '*');
      const problem =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'has a segment that is too long'
          : 'is not a valid URL path';
      sendError(reply, invalidParameter([{ parameter: 'path', problem }]));
    },
    routerOptions: {
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      caseSensitive: true,
      maxParamLength: 300,
    },
    ajv: {
      customOptions: { coerceTypes: true, removeAdditional: false, allErrors: true, useDefaults: false },
    },
    schemaErrorFormatter: (errors, dataVar) => invalidParameter(problemsOf(errors as AjvError[], dataVar)),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routes = routeTable();
  app.addHook('onRoute', (route) => routes.add(route.method, route.url));
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('caller', null);
  app.decorateRequest('clamped', undefined);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
    if (closing) {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'The server is shutting down; retry the request.',
        {},
        { 'retry-after': '1', connection: 'close' },
      );
    }
  });
  // AJV coerces 'Infinity' and '1e400' to Infinity and then skips its range checks: refuse them.
  app.addHook('preHandler', async (request) => {
    for (const source of [request.query, request.params]) {
      if (source === null || typeof source !== 'object') continue;
      for (const [parameter, value] of Object.entries(source)) {
        if (typeof value === 'number' && !Number.isFinite(value)) {
          throw invalidParameter([{ parameter, problem: 'must be a finite number' }]);
        }
      }
    }
  });
  // Bodies are JSON only: anything else is 415 UNSUPPORTED_MEDIA_TYPE.
  app.removeContentTypeParser('text/plain');

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // An OPTIONS without Origin is answered like a preflight (204), not with a text/plain 400.
    strictPreflight: false,
  });

  const pressure = deps.server?.pressure;
  if (pressure !== false) {
    const p = { ...SERVER_DEFAULTS.pressure, ...pressure };
    const retryAfter = Math.max(1, Math.ceil(p.retryAfterSeconds));
    await app.register(underPressure, {
      maxEventLoopDelay: p.maxEventLoopDelayMs,
      maxHeapUsedBytes: p.maxHeapUsedBytes,
      maxRssBytes: p.maxRssBytes,
      sampleInterval: p.sampleIntervalMs,
      exposeStatusRoute: false,
      // Refused before authentication: an overloaded request is neither limited nor counted.
      pressureHandler: async () => {
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          `The server is overloaded; retry after ${retryAfter} s.`,
          {},
          { 'retry-after': String(retryAfter) },
        );
      },
    });
  }

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error instanceof BackendUnavailableError) {
      request.log.warn({ err: error.message }, 'backend unavailable');
      return sendError(
        reply,
        new ApiError(
          'SERVICE_UNAVAILABLE',
          'A backend is briefly unavailable; retry shortly.',
          {},
          { 'retry-after': '1' },
        ),
      );
    }
    const status = error.statusCode ?? 500;
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large.'));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendError(
        reply,
        new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.'),
      );
    }
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON body, bad encoding in the URL, and the like.
      return sendError(
        reply,
        invalidParameter([
          {
            parameter:
              error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code?.startsWith('FST_ERR_CTP')
                ? 'body'
                : 'request',
            problem: error.message,
          },
        ]),
      );
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendError(
      reply,
      new ApiError('INTERNAL_ERROR', `An unexpected error occurred. Request id: ${request.id}`),
    );
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routes.methodsOf(path);
    if (allowed.length > 0) {
      const allow = allowed.join(', ');
      return sendError(
        reply,
        new ApiError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on ${path.slice(0, 200)}; use ${allow}.`,
          {},
          { allow },
        ),
      );
    }
    sendError(reply, new ApiError('NOT_FOUND', `No route ${request.method} ${path.slice(0, 200)}.`));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Lending Risk Data API',
        version: API_VERSION,
        description:
          'Read-only risk data for decentralized lending: markets of Morpho, Aave, Spark, Compound, Euler and Fluid ' +
          'on many EVM chains, their oracles and oracle freshness, and positions close to liquidation. ' +
          'Every success is `{ data, meta }`; every error is `{ error, message, ...details }`.\n\n' +
          '| error | status |\n|---|---|\n' +
          Object.entries(ERROR_STATUS)
            .map(([code, status]) => `| \`${code}\` | ${status} |`)
            .join('\n'),
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'API key: `lrds_live_…` or `lrds_test_…`.',
          },
        },
      },
      tags: [
        { name: 'Markets', description: 'Lending markets (core category).' },
        { name: 'Risk', description: 'Positions close to liquidation (risk category).' },
        {
          name: 'Client',
          description: 'Self-service: your account, keys, usage and quota. Not counted toward quotas.',
        },
        { name: 'Service', description: 'Health and the API description. No key needed.' },
      ],
    },
  });

  await app.register(
    async (v1: Api) => {
      v1.get(
        '/health',
        {
          schema: {
            operationId: 'health',
            tags: ['Service'],
            summary: 'Service health',
            description:
              'State of the store, the limiter backend and each dataset. No key needed; not counted.',
            response: {
              200: Type.Object({
                status: Type.Unsafe<string>({ type: 'string', enum: ['ok', 'degraded'] }),
                version: Type.String(),
                store: Type.Object({ backend: Type.String(), state: Type.String() }),
                limiter: Type.Object({ backend: Type.String(), state: Type.String() }),
                datasets: Type.Array(
                  Type.Object({
                    mode: Type.String(),
                    kind: Type.String(),
                    profile: Type.String(),
                    refreshedAt: Type.String(),
                    markets: Type.Integer(),
                    positions: Type.Integer(),
                  }),
                ),
              }),
            },
          },
        },
        async () => {
          const report: HealthReport = deps.health ? await deps.health() : await defaultHealth(deps);
          return { ...report, version: API_VERSION };
        },
      );
      v1.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
        reply.type('application/json').send(app.swagger()),
      );

      await v1.register(async (authed: Api) => {
        authed.addHook('onRequest', accessHook(deps));
        registerMarketsSearch(authed, deps);
        registerMarketsList(authed, deps);
        registerMarketDetail(authed, deps);
        registerPositionsAtRisk(authed, deps);
        registerClientRoutes(authed, deps);
      });
    },
    { prefix: API_PREFIX },
  );

  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply) => {
      reply.header(
        'content-security-policy',
        "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
      );
    });
    await docs.register(scalar, {
      routePrefix: '/docs',
      configuration: { url: `${API_PREFIX}/openapi.json`, title: 'Lending Risk Data API' },
    });
  });

  return app;
}

async function defaultHealth(deps: AppDeps): Promise<HealthReport> {
  let storeUp: boolean;
  try {
    if (deps.store.ping) storeUp = await deps.store.ping();
    else {
      await deps.store.keysVersion();
      storeUp = true;
    }
  } catch {
    storeUp = false;
  }
  const datasets = (['live', 'test'] as const).map((mode) => {
    const d = deps.data.get(mode).dataset;
    return {
      mode,
      kind: d.kind,
      profile: d.profile,
      refreshedAt: new Date(d.refreshedAt).toISOString(),
      markets: d.marketCount,
      positions: d.positionCount,
    };
  });
  const limiterState = deps.admission.state?.() ?? 'up';
  return {
    status: storeUp && limiterState === 'up' ? 'ok' : 'degraded',
    store: { backend: deps.store.kind, state: storeUp ? 'up' : 'down' },
    limiter: { backend: deps.admission.backend, state: limiterState },
    datasets,
  };
}
