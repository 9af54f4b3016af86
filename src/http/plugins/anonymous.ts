import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AnonymousLimiter, type AnonymousResult } from '../../access/anonymous-limit.ts';
import type { Clock } from '../../domain/clock.ts';
import { processMetrics } from '../../metrics.ts';
import type { ServerOptions } from '../context.ts';
import { ApiError } from '../errors.ts';
import { SERVER_DEFAULTS } from '../server-options.ts';

/**
 * Whether a request is one of a key holder: it carries a key (checked next, by the access
 * pipeline) to a route that needs one. Everything else is anonymous: the routes that need no key
 * (the OpenAPI document, the docs, health, the API root), unknown paths, and requests without a key.
 */
export function keyed(request: FastifyRequest): boolean {
  return request.routeOptions.config?.access !== undefined && request.headers.authorization !== undefined;
}

/** The refusal of an anonymous request over its address's budget: 429 with Retry-After. */
function refusal(r: Extract<AnonymousResult, { ok: false }>): ApiError {
  processMetrics().refusals.inc({ reason: 'ANONYMOUS', tier: 'none' });
  return new ApiError(
    'RATE_LIMIT_EXCEEDED',
    `Too many requests without an API key from this address; retry after ${r.retryAfterSeconds} s.`,
    { retryAfter: r.retryAfterSeconds },
    { 'retry-after': String(r.retryAfterSeconds) },
  );
}

/** Charges an anonymous request to its address: the error to answer when the budget is spent, else null. */
export type ChargeAnonymous = (request: FastifyRequest) => ApiError | null;

declare module 'fastify' {
  interface FastifyInstance {
    /** Charges a request to the anonymous budget of its address (a refused key, say). */
    chargeAnonymous: ChargeAnonymous;
  }
}

/**
 * The budget of anonymous requests, per client address (src/access/anonymous-limit.ts): charged
 * before anything else is done for them. A request with a key to a route that needs one is
 * charged only when the key is refused (the access pipeline calls `app.chargeAnonymous`), so a
 * flood of made-up keys is bounded the same way. CORS preflights (OPTIONS) are not charged: a browser sends one per URL
 * of a keyed call, and they cost nothing. The address is the socket's, or the client's as the
 * trusted proxies say (TRUST_PROXY).
 */
export const anonymousPlugin = fp(
  async (app: FastifyInstance, opts: { limits: ServerOptions['anonymous']; clock: Clock }) => {
    const limits = opts.limits;
    const limiter =
      limits === false ? null : new AnonymousLimiter({ ...SERVER_DEFAULTS.anonymous, ...limits });
    const charge: ChargeAnonymous = (request) => {
      if (limiter === null) return null;
      const r = limiter.take(request.ip, opts.clock.now());
      return r.ok ? null : refusal(r);
    };
    app.decorate('chargeAnonymous', charge);
    if (limiter === null) return;
    app.addHook('onRequest', async (request) => {
      if (keyed(request) || request.method === 'OPTIONS') return;
      const refused = charge(request);
      if (refused) throw refused;
    });
  },
  { name: 'lrds-anonymous' },
);
