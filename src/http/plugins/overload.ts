import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppDeps, ServerOptions } from '../context.ts';
import { ApiError } from '../errors.ts';
import { SERVER_DEFAULTS } from '../server-options.ts';
import { keyed } from './anonymous.ts';

/**
 * Overload shedding (@fastify/under-pressure): while the event loop lags past a threshold,
 * requests are refused with 503 and Retry-After before authentication, so an overloaded request
 * is neither limited nor counted. A lag the service's own background jobs caused (a job's run
 * held the loop within the last two samples) is not overload: requests are then served.
 * Anonymous requests (no key, or a route that needs none: see plugins/anonymous.ts) are shed
 * from a lower threshold than requests with a key, so that the document, the docs and unknown
 * paths are refused first and key holders keep being served.
 */
export const overloadPlugin = fp(
  async (
    app: FastifyInstance,
    opts: { pressure: ServerOptions['pressure']; backgroundWork?: AppDeps['backgroundWork'] },
  ) => {
    const pressure = opts.pressure;
    if (pressure !== false) {
      const p = { ...SERVER_DEFAULTS.pressure, ...pressure };
      const retryAfter = Math.max(1, Math.ceil(p.retryAfterSeconds));
      // The event loop's delay is sampled from registration on, so the first samples after start
      // include the start itself (compiling every route's serializer takes seconds, and no request
      // can wait on it): until two sample intervals after ready, a delay does not shed.
      let measuredFrom = Number.POSITIVE_INFINITY;
      app.addHook('onReady', async () => {
        measuredFrom = performance.now() + 2 * p.sampleIntervalMs;
      });
      await app.register(underPressure, {
        maxEventLoopDelay: Math.min(p.maxEventLoopDelayMs, p.anonymousMaxEventLoopDelayMs),
        maxHeapUsedBytes: p.maxHeapUsedBytes,
        maxRssBytes: p.maxRssBytes,
        sampleInterval: p.sampleIntervalMs,
        exposeStatusRoute: false,
        // Refused before authentication: an overloaded request is neither limited nor counted.
        pressureHandler: async (request, _reply, type, value) => {
          if (type === 'eventLoopDelay') {
            if (
              performance.now() < measuredFrom ||
              opts.backgroundWork?.heldLoopWithin(2 * p.sampleIntervalMs)
            )
              return;
            // Between the two thresholds only anonymous requests are shed.
            if (typeof value === 'number' && value <= p.maxEventLoopDelayMs && keyed(request)) return;
          }
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
