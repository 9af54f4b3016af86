import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppDeps, ServerOptions } from './context.ts';
import { invalidParameter } from './errors.ts';
import { lazyChild, writes } from './lazy-logger.ts';
import { lazySerializers } from './lazy-serializers.ts';
import { accessHook, accessPlugin } from './plugins/access.ts';
import { anonymousPlugin } from './plugins/anonymous.ts';
import { compressionPlugin } from './plugins/compression.ts';
import { type AjvError, errorsPlugin, frameworkErrors, problemsOf } from './plugins/errors.ts';
import { metricsPlugin } from './plugins/metrics.ts';
import { API_PREFIX, openapiPlugin } from './plugins/openapi.ts';
import { overloadPlugin } from './plugins/overload.ts';
import {
  clientErrorHandler,
  maskedRequest,
  maskKeysInLogLine,
  requestId,
  securityPlugin,
} from './plugins/security.ts';
import { AREAS } from './routes/areas.ts';
import { registerRoutes } from './routes/index.ts';
import { registerServerRoot } from './routes/service/root.ts';
import { SERVER_DEFAULTS } from './server-options.ts';

export { API_VERSION } from './plugins/openapi.ts';
export { refuseRequestsOn } from './plugins/security.ts';

/** Builds the whole HTTP app. Listening is the caller's business (src/cli/serve.ts). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const server: Required<Omit<ServerOptions, 'pressure' | 'anonymous'>> = {
    ...SERVER_DEFAULTS,
    ...deps.server,
  };
  const headersTimeout = Math.min(server.headersTimeoutMs, server.requestTimeoutMs || Infinity);
  // Response serializers compiled on first use, the rest in the background once ready.
  const serializers = lazySerializers();
  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: serializers.buildSerializer } },
    logger:
      deps.logger === false || deps.logger === undefined
        ? false
        : {
            ...(typeof deps.logger === 'object' ? deps.logger : {}),
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
            // Whatever a line holds, a key in any field is masked before it is written.
            hooks: { streamWrite: maskKeysInLogLine },
            serializers: {
              req: maskedRequest,
              ...(typeof deps.logger === 'object' ? (deps.logger.serializers as object) : {}),
            },
          },
    // The caller's own id when it sends a valid one (X-Request-Id, else the trace id of a W3C
    // traceparent), so its logs and ours can be joined; otherwise a random prefix per process and
    // a counter: unique across instances, and no CSPRNG call per request.
    genReqId: requestId,
    // Where requests log nothing when they go well (LOG_LEVEL warn and above), their logger
    // becomes a pino child only when a line is written (src/http/lazy-logger.ts).
    childLoggerFactory: (logger, bindings, options) =>
      writes(logger, 'info')
        ? logger.child(bindings, options)
        : lazyChild(() => logger, logger, bindings, options as Record<string, unknown>),
    bodyLimit: 16 * 1024,
    // A number of hops: the addresses that many hops in are proxies.
    trustProxy:
      typeof server.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, hop: number) =>
              hop < hops
          )(server.trustProxy)
        : server.trustProxy,
    connectionTimeout: server.connectionTimeoutMs,
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    maxRequestsPerSocket: server.maxRequestsPerSocket,
    http: {
      headersTimeout,
      requestTimeout: server.requestTimeoutMs,
      connectionsCheckingInterval: server.connectionsCheckingIntervalMs,
    },
    // Our own 503 (below) has the "Errors" (docs/decisions.md) body; Fastify's has not.
    return503OnClosing: false,
    clientErrorHandler,
    // Routing failures (bad percent-encoding in the path, a path segment over maxParamLength).
    frameworkErrors,
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

  app.decorate('serializers', serializers);
  let closed = false;
  app.addHook('onReady', async () => {
    void serializers.warm(
      () => closed,
      (err) => app.log.error({ err }, 'a response schema does not compile'),
    );
  });
  app.addHook('onClose', async () => {
    closed = true;
  });
  await app.register(securityPlugin);
  await app.register(metricsPlugin);
  await app.register(compressionPlugin);
  await app.register(overloadPlugin, {
    pressure: deps.server?.pressure,
    ...(deps.backgroundWork ? { backgroundWork: deps.backgroundWork } : {}),
  });
  await app.register(anonymousPlugin, { limits: deps.server?.anonymous, clock: deps.clock });
  await app.register(errorsPlugin);
  await app.register(openapiPlugin, { areas: AREAS });
  await app.register(accessPlugin);
  registerServerRoot(app);
  await app.register(
    async (v1) => {
      await registerRoutes(v1, AREAS, deps, accessHook(deps, app.chargeAnonymous));
    },
    { prefix: API_PREFIX },
  );
  return app;
}
