import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerOptions } from '../context.ts';
import { ApiError } from '../errors.ts';
import { SERVER_DEFAULTS } from '../server-options.ts';

/**
 * Overload shedding (@fastify/under-pressure): while the event loop lags past the threshold,
 * requests are refused with 503 and Retry-After before authentication, so an overloaded request
 * is neither limited nor counted.
 */
export const overloadPlugin = fp(
  async (app: FastifyInstance, opts: { pressure: ServerOptions['pressure'] }) => {
    const pressure = opts.pressure;
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
  },
  { name: 'lrds-overload' },
);
