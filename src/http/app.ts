import { randomBytes } from 'node:crypto';
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalar from '@scalar/fastify-api-reference';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { accessHook } from './access-hook.ts';
import type { AppDeps, HealthReport } from './context.ts';
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
      problem = `must be ${e.params.type === 'integer' ? 'an integer' : `a ${e.params.type}`}`;
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

/** Builds the whole HTTP app. Listening is the caller's business (src/cli/serve.ts). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      deps.logger === false || deps.logger === undefined
        ? false
        : {
            ...(typeof deps.logger === 'object' ? deps.logger : {}),
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
          },
    genReqId: () => `req_${randomBytes(12).toString('base64url')}`,
    bodyLimit: 16 * 1024,
    return503OnClosing: true,
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

  app.decorateRequest('startedAt', 0);
  app.decorateRequest('caller', null);
  app.decorateRequest('clamped', undefined);
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    reply.header('x-request-id', request.id);
  });

  await app.register(helmet, {
    // JSON API: nothing may be framed or loaded; the docs page sets its own policy below.
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  });
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
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
  let storeUp = true;
  try {
    await deps.store.keysVersion();
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
  return {
    status: storeUp ? 'ok' : 'degraded',
    store: { backend: deps.store.kind, state: storeUp ? 'up' : 'down' },
    limiter: { backend: deps.admission.backend, state: 'up' },
    datasets,
  };
}
